package audit

import (
	"errors"
	"time"

	"fmt"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify/audit/builtby"
)

// Options name the checkpoint verifier keys the auditor trusts, parsed
// where the caller took them in (a flag, a fleet file). A nil key means
// the key the auditor's state remembers, else the one stored in the log
// itself (or the export), which proves the log is self-consistent but not
// whose it is. StateFile, if
// set, is the auditor's memory, a file of at most MaxStateFile
// bytes (a larger one is an error): the checkpoints it trusted at its
// last successful audit; the logs must extend them (else the audit fails
// with both checkpoints and the failing proof), and a successful audit
// writes the new ones there.
type Options struct {
	AuthorityVKey *formats.LogKey
	DecisionsVKey *formats.LogKey
	StateFile     string
	TrustRoot     string // digest the first root record must have; "" trusts on first use
	// Policy, when set, is the witness policy (c2sp.org/tlog-policy) the
	// authority log's latest checkpoint must meet (Report.Witnessing).
	Policy *formats.Policy
	// Since and Until (zero: open) bound the period the report counts:
	// decisions with since <= time < until. Verification covers every
	// entry whatever the period.
	Since, Until time.Time
	// Now is the clock for "expired"; time.Now when nil.
	Now func() time.Time
	// Progress, if not nil, is told how far the audit is: for a Dir, the
	// entries verified of both logs' sizes, every ProgressEvery entries
	// and at the end of each log; for an ExportFile, the bytes of the
	// export file read, of its size (the sections' sizes are known only as
	// they come); for RunFleet, the entries verified of the authority
	// log's size (verified once) and every runner's decision log's.
	Progress func(done, total int64)
	// List, when set, selects decisions of the period for Report.List
	// (writ audit --list); Filter.Check it first.
	List *Filter
}

// ProgressEvery is how many entries pass between Progress calls.
const ProgressEvery = 4096

// CheckpointSummary is a verified checkpoint, for reports.
type CheckpointSummary struct {
	Origin   string `json:"origin"`
	Size     int64  `json:"size"`
	RootHash string `json:"root_hash"` // lowercase hex
	// Signed is the signed checkpoint note as verified, with its witness
	// cosignatures (text; at most formats.MaxCheckpointSize bytes): kept in
	// the auditor's state file, it is the evidence a later fork is
	// proven against. Empty in a state file an older writ wrote.
	Signed string `json:"signed,omitempty"`
}

func summarize(c formats.Checkpoint) *CheckpointSummary {
	return &CheckpointSummary{Origin: c.Origin, Size: c.Size, RootHash: fmt.Sprintf("%x", c.Hash[:])}
}

// Report is the outcome of Run.
type Report struct {
	OK               bool  `json:"ok" doc:"whether both logs verified end to end"`
	EntriesVerified  int64 `json:"entries_verified" doc:"entries verified, both logs"`
	AuthorityEntries int64 `json:"authority_entries" doc:"entries of the authority log"`
	Decisions        int64 `json:"decisions" doc:"decisions in the decision log"`
	// WouldRefuse counts decisions admitted (in any verdict) although a
	// rule failed: what enforce would have refused.
	WouldRefuse int64              `json:"would_refuse_under_enforce" doc:"decisions admitted although a rule failed"`
	ByVerdict   map[string]int64   `json:"by_verdict" doc:"decisions per verdict"`
	ByRule      map[string]int64   `json:"by_rule" doc:"decisions per deciding rule"`
	Authority   *CheckpointSummary `json:"authority_checkpoint,omitempty" doc:"the authority log's verified checkpoint: origin, size, root_hash"`
	DecisionLog *CheckpointSummary `json:"decision_checkpoint,omitempty" doc:"the decision log's: origin, size, root_hash"`
	Failure     *Failure           `json:"failure,omitempty" doc:"the first failure: log, index, error"`
	// Witnessing is what Options.Policy found on the authority
	// checkpoint: the witnesses that cosigned it, when, and the quorum.
	Witnessing *formats.Witnessing `json:"witnessing,omitempty" doc:"with --policy: the quorum that cosigned the authority checkpoint"`
	// Traffic is the report beyond verdicts and rules (see Traffic).
	// Provenance is who built what the authority log pins (builtby).
	Provenance *builtby.Report `json:"provenance,omitempty" doc:"pins with build provenance (builder, builder_key, issuer, identity, repository, commit), pins without, admissions that relied on provenance"`
	Traffic    *Traffic        `json:"traffic,omitempty" doc:"by_mode, by_machine, by_stream, by_signer, unsigned, unsigned_share, would_refuse_by_rule, days (every day of the period; partial marks a day it covers in part), flagged_builds, authority_events, since, until (whole seconds), first_decision, last_decision, outside_period, ..."`
	// RunnerKeyProtection is how the runner keeps the key that signs the
	// decision log, as the ledger directory states it
	// (keys.RunnerProtection: "file", "passphrase" or "pkcs11"); empty when the
	// directory holds no runner key (a replica, an export). It is the
	// runner's statement, not covered by any signature.
	RunnerKeyProtection string `json:"runner_key_protection,omitempty" doc:"how the runner says it keeps its key: file or passphrase (not signed)"`
	// Trust is what the verification rests on: the keys the checkpoints
	// were checked with and where each came from, and the first root
	// (see Trust). Never nil.
	Trust *Trust `json:"trust" doc:"authority_key and decisions_key (name, key_id, source: given, state or ledger), trust_root, first_root, independent: no key was taken from the ledger itself"`
	// AuditedAt is when the audit ran, by its clock (Options.Now):
	// RFC 3339, UTC, whole seconds. An open period ends here.
	AuditedAt string `json:"audited_at" doc:"the audit's clock, RFC 3339; an open period ends there"`
	// KeyLabels says, for each signer the report counts whose key the
	// verified authority log names, what it holds (delegation.State.
	// KeyLabels): a root key, or its latest delegation's actions and
	// scope.
	KeyLabels map[string]string `json:"key_labels,omitempty" doc:"for each signer counted that the authority log names: a root key, or its latest delegation's actions and scope"`
	// List is what Options.List selected (nil without one); only a
	// report that is OK lists what it verified.
	List *List `json:"-"`
	// Details keeps, per deciding rule, the first DetailsPerRule
	// decisions of the period, for the page's details tables.
	Details map[string][]Listed `json:"-"`

	// the verifier keys the logs were checked with, for the state file
	authorityVKey, decisionsVKey *formats.LogKey
	// now is the audit's clock reading, AuditedAt
	now time.Time
	// admitted maps each admitted instruction id to its decision index
	admitted map[[16]byte]int64
	// marks holds each artifact's highest high-water mark so far and the
	// decision that recorded it
	marks map[string]heldMark
	opts  Options
	// progress: entries seen, of how many
	progressDone, progressTotal int64
	// state is the auditor's state the audit started from; found the
	// signed checkpoint of each log ("authority", "decisions") as read
	state *auditState
	found map[string][]byte
}

// Failure is the evidence of a failed audit: which log, which entry
// (-1 when not one entry), the error, and for a fork or rollback both
// signed checkpoints and the proof.
type Failure struct {
	Log   string `json:"log"` // "authority" or "decisions"
	Index int64  `json:"index"`
	Error string `json:"error"`
	// Rule is the stable rule id of the refusal, where it has one: a
	// trust assertion that does not hold (*ledger.TrustError:
	// rules.VKeyMismatch, rules.RootUntrusted), a quorum missed
	// (rules.LedgerUnwitnessed), a record refused (*delegation.RecordError),
	// or nothing verified (rules.NothingVerified).
	Rule string `json:"rule,omitempty"`
	// Evidence, for a log that is not an extension of the checkpoint the
	// auditor's state trusted (a *ledger.InconsistencyError): both
	// checkpoints, as signed notes where known, and the failed proof, to
	// be checked elsewhere.
	Evidence *ledger.Evidence `json:"evidence,omitempty"`
	// Cause is the error itself, typed: callers use errors.As on it
	// (*ledger.IntegrityError, *ledger.InconsistencyError,
	// *delegation.RecordError, ...).
	Cause error `json:"-"`
}

// newAudit starts the report of an audit under o, reading the auditor's
// state file.
func newAudit(o Options) (*Report, error) {
	rep := &Report{ByVerdict: map[string]int64{}, ByRule: map[string]int64{}, admitted: map[[16]byte]int64{}, marks: map[string]heldMark{},
		Traffic: newTraffic(), Provenance: builtby.New(), Trust: &Trust{TrustRoot: o.TrustRoot}, opts: o, found: map[string][]byte{},
		Details: map[string][]Listed{}}
	if o.List != nil {
		rep.List = &List{}
	}
	// The bounds as counted: decisions record whole seconds.
	if !o.Since.IsZero() {
		rep.Traffic.Since = unixUTC(ceilUnix(o.Since))
	}
	if !o.Until.IsZero() {
		rep.Traffic.Until = unixUTC(ceilUnix(o.Until))
	}
	if rep.opts.Now == nil {
		rep.opts.Now = time.Now
	}
	rep.now = rep.opts.Now().UTC().Truncate(time.Second)
	rep.AuditedAt = rep.now.Format(time.RFC3339)
	for _, v := range schemas.Verdicts {
		rep.ByVerdict[string(v)] = 0
	}
	var err error
	rep.state, err = readState(o.StateFile)
	return rep, err
}

// fail ends the audit with err against log: the report says why, and
// counts nothing.
func (rep *Report) fail(log string, err error) *Report {
	rep.OK = false
	var ie *ledger.InconsistencyError
	if errors.As(err, &ie) {
		// Both signed checkpoints, where the audit had them: the one the
		// state trusted and the one the log holds now.
		if t := rep.state.summary(log); ie.TrustedSigned == nil && t != nil && t.Signed != "" {
			ie.TrustedSigned = []byte(t.Signed)
		}
		if ie.FoundSigned == nil {
			ie.FoundSigned = rep.found[log]
		}
	}
	rep.Failure = failure(log, err)
	// Counts made before the failure describe a ledger that does not
	// verify: none of them is reported.
	rep.Decisions, rep.WouldRefuse, rep.Traffic, rep.Provenance = 0, 0, nil, nil
	rep.ByVerdict, rep.ByRule = map[string]int64{}, map[string]int64{}
	return rep
}

// finish marks the audit good and saves the new trusted checkpoints.
func (rep *Report) finish(stateFile string) error {
	rep.OK = true
	rep.Trust.setIndependent()
	rep.Traffic.finish(rep.Decisions, rep.opts, rep.now)
	for k := range rep.KeyLabels {
		if _, counted := rep.Traffic.BySigner[k]; !counted {
			delete(rep.KeyLabels, k) // a label for a signer the report shows, no other
		}
	}
	if stateFile == "" {
		return nil
	}
	return writeState(stateFile, &auditState{Authority: logSignedOnly(rep.Authority, rep.authorityVKey),
		Decisions: logSignedOnly(rep.DecisionLog, rep.decisionsVKey), AuthorityVKey: rep.authorityVKey.String(), DecisionsVKey: rep.decisionsVKey.String()})
}

// logSignedOnly is c for the auditor's state: its signed note reduced to
// what the log key signed (formats.LogSigned), without the witness
// cosignatures, which nothing verified without a policy and whose size
// the writer and its witnesses choose. The state then stays small and
// holds only what a later check can verify under the log key k (nil:
// none, and no signed note is kept).
func logSignedOnly(c *CheckpointSummary, k *formats.LogKey) *CheckpointSummary {
	if c == nil {
		return nil
	}
	out := *c
	out.Signed = ""
	if k != nil {
		if b, err := formats.LogSigned([]byte(c.Signed), k); err == nil {
			out.Signed = string(b)
		}
	}
	return &out
}

// failure is the Failure of log for err, with the index, rule and
// evidence err carries.
func failure(log string, err error) *Failure {
	f := &Failure{Log: log, Index: -1, Error: err.Error(), Cause: err}
	var ie *ledger.IntegrityError
	var re *delegation.RecordError
	var inc *ledger.InconsistencyError
	switch {
	case errors.As(err, &ie):
		f.Index = ie.Index
	case errors.As(err, &re):
		f.Index, f.Rule = re.Index, re.Rule
	}
	var te *ledger.TrustError
	switch {
	case errors.As(err, &te):
		f.Rule = te.Rule
	case errors.Is(err, formats.ErrQuorum):
		f.Rule = rules.LedgerUnwitnessed
	}
	if errors.As(err, &inc) {
		ev := inc.Evidence()
		f.Evidence = &ev
	}
	return f
}

// Where names the failure's place for people: "authority log", or
// "authority log entry 5" when it is tied to an entry (Index ≥ 0).
func (f *Failure) Where() string {
	if f.Index < 0 {
		return f.Log + " log"
	}
	return fmt.Sprintf("%s log entry %d", f.Log, f.Index)
}
