package verify

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/schemas"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/sumdb/tlog"
)

// AuditOptions name the checkpoint verifier keys the auditor trusts. An
// empty key means the key stored in the log itself (or the export), which
// proves the log is self-consistent but not whose it is. StateFile, if
// set, is the auditor's memory, a file of at most MaxAuditStateFile
// bytes (a larger one is an error): the checkpoints it trusted at its
// last successful audit; the logs must extend them (else the audit fails
// with both checkpoints and the failing proof), and a successful audit
// writes the new ones there.
type AuditOptions struct {
	AuthorityVKey string
	DecisionsVKey string
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
	// Progress, if not nil, is told how far the audit is: for Audit, the
	// entries verified of both logs' sizes, every ProgressEvery entries
	// and at the end of each log; for AuditExport, the bytes of the
	// export file read, of its size (the sections' sizes are known only as
	// they come).
	Progress func(done, total int64)
}

// ProgressEvery is how many entries pass between Progress calls.
const ProgressEvery = 4096

// counting wraps fn so that every entry counts towards the audit's
// progress (the logs' sizes are the total).
func (rep *Report) counting(fn ledger.EntryFunc) ledger.EntryFunc {
	if rep.opts.Progress == nil {
		return fn
	}
	return func(i int64, e []byte, accepted time.Time) error {
		rep.progressDone++
		if rep.progressDone%ProgressEvery == 0 {
			rep.opts.Progress(rep.progressDone, rep.progressTotal)
		}
		if fn == nil {
			return nil
		}
		return fn(i, e, accepted)
	}
}

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

// Report is the outcome of Audit.
type Report struct {
	OK               bool  `json:"ok"`
	EntriesVerified  int64 `json:"entries_verified"`
	AuthorityEntries int64 `json:"authority_entries"`
	Decisions        int64 `json:"decisions"`
	// WouldRefuse counts decisions admitted (in any verdict) although a
	// rule failed: what enforce would have refused.
	WouldRefuse int64              `json:"would_refuse_under_enforce"`
	ByVerdict   map[string]int64   `json:"by_verdict"`
	ByRule      map[string]int64   `json:"by_rule"`
	Authority   *CheckpointSummary `json:"authority_checkpoint,omitempty"`
	DecisionLog *CheckpointSummary `json:"decision_checkpoint,omitempty"`
	Failure     *AuditFailure      `json:"failure,omitempty"`
	// Witnessing is what AuditOptions.Policy found on the authority
	// checkpoint: the witnesses that cosigned it, when, and the quorum.
	Witnessing *formats.Witnessing `json:"witnessing,omitempty"`
	// Traffic is the report beyond verdicts and rules (see Traffic).
	Traffic *Traffic `json:"traffic,omitempty"`
	// RunnerKeyProtection is how the runner keeps the key that signs the
	// decision log, as the ledger directory states it
	// (ledger.RunnerKeyProtection: "file" or "passphrase"); empty when the
	// directory holds no runner key (a replica, an export). It is the
	// runner's statement, not covered by any signature.
	RunnerKeyProtection string `json:"runner_key_protection,omitempty"`
	// Trust is what the verification rests on: the keys the checkpoints
	// were checked with and where each came from, and the first root
	// (see AuditTrust). Never nil.
	Trust *AuditTrust `json:"trust"`
	// AuditedAt is when the audit ran, by its clock (AuditOptions.Now):
	// RFC 3339, UTC, whole seconds. An open period ends here.
	AuditedAt string `json:"audited_at"`

	// the verifier keys the logs were checked with, for the state file
	authorityVKey, decisionsVKey string
	// now is the audit's clock reading, AuditedAt
	now time.Time
	// admitted maps each admitted instruction id to its decision index
	admitted map[[16]byte]int64
	// marks holds each artifact's highest high-water mark so far and the
	// decision that recorded it
	marks map[string]heldMark
	opts  AuditOptions
	// progress: entries seen, of how many
	progressDone, progressTotal int64
	// state is the auditor's state the audit started from; found the
	// signed checkpoint of each log ("authority", "decisions") as read
	state *auditState
	found map[string][]byte
}

// AuditFailure is the evidence of a failed audit: which log, which entry
// (-1 when not one entry), the error, and for a fork or rollback both
// signed checkpoints and the proof.
type AuditFailure struct {
	Log   string `json:"log"` // "authority" or "decisions"
	Index int64  `json:"index"`
	Error string `json:"error"`
	// Rule is the stable rule id of the refusal, where it has one: a
	// trust assertion that does not hold (*ledger.TrustError:
	// RuleVKeyMismatch, RuleRootUntrusted), a quorum missed
	// (RuleLedgerUnwitnessed), a record refused (*delegation.RecordError),
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

// Audit verifies the ledger at dir end to end, then counts its decisions.
// Verification: the authority log's entries, tree and signed checkpoint
// (ledger.Log.Verify), every entry's signatures and authority replayed in
// order (LoadAuthority), then the decision log's tree and checkpoint and
// every decision record decoded strictly, and finally consistency with the
// auditor's state file. Any failure stops the audit and is reported in
// Report.Failure with OK false; the error return is only for a ledger that
// cannot be opened at all.
func Audit(dir string, o AuditOptions) (*Report, error) {
	rep, st, err := newAudit(o)
	if err != nil {
		return nil, err
	}
	auth, err := ledger.OpenAuthority(dir, nil)
	if err != nil {
		return nil, err
	}
	defer func() { auth.Close() }() // whichever open of it is current
	tk, vkey, err := pickVKey("authority", o.AuthorityVKey, st.AuthorityVKey, auth.VerifierKey())
	if err != nil {
		return rep.fail("authority", err), nil
	}
	rep.Trust.Authority = tk
	rep.authorityVKey = vkey
	rep.progressTotal = auth.Size()
	if has, _ := ledger.HasDecisions(dir, false); has {
		if dec, err := ledger.OpenDecisionsReadOnly(dir); err == nil {
			rep.progressTotal += dec.Size()
			dec.Close()
		}
	}
	a, err := loadAuthority(auth, vkey, rep.authorityEvent, rep.counting)
	if err == nil {
		rep.Trust.FirstRoot = firstRoot(a.State)
		err = Trust{TrustRoot: o.TrustRoot}.checkRoot(a)
	}
	if err == nil {
		rep.Witnessing, err = Trust{Policy: o.Policy}.checkWitnessed(auth, vkey, a.Checkpoint, func() (time.Time, error) { return rep.opts.Now(), nil })
	}
	if err != nil {
		return rep.fail("authority", err), nil
	}
	rep.found["authority"], _ = auth.CosignedCheckpoint()
	if st.Authority != nil {
		if _, err := auth.CheckConsistent(st.Authority.checkpoint(), a.Checkpoint); err != nil {
			return rep.fail("authority", err), nil
		}
	}
	rep.Authority = summarize(a.Checkpoint)
	rep.Authority.Signed = string(rep.found["authority"])
	rep.AuthorityEntries = a.Checkpoint.Size
	rep.EntriesVerified = a.Checkpoint.Size
	authCP := a.Checkpoint
	// The replayed state is not needed for the decisions (closing the log
	// drops the last reference to it), and closing unmaps the tables whose
	// pages the verification made resident: a fresh read-only open serves
	// the few tree hashes the decisions need, each proven against the
	// verified root.
	auth.Close()
	if auth, err = ledger.OpenAuthority(dir, nil); err != nil {
		return nil, err
	}
	has, err := decisionsExpected(dir, o, st)
	if err != nil {
		return rep.fail("decisions", err), nil
	}
	if has {
		dec, err := ledger.OpenDecisionsReadOnly(dir)
		if err != nil {
			return nil, err
		}
		defer dec.Close()
		if tk, vkey, err = pickVKey("decisions", o.DecisionsVKey, st.DecisionsVKey, dec.VerifierKey()); err == nil {
			rep.Trust.Decisions = tk
			err = checkDecisionOrigin(authCP.Origin, dec.Origin(), vkey, dec.VerifierKey())
		}
		if err != nil {
			return rep.fail("decisions", err), nil
		}
		rep.decisionsVKey = vkey
		bind := &authorityBinding{size: authCP.Size, rootAt: func(n int64) (tlog.Hash, bool, error) {
			return provenRoot(auth, authCP, n)
		}}
		tally, wait := rep.tallyBound(bind)
		cp, err := dec.Verify(vkey, rep.counting(tally))
		if werr := wait(); werr != nil {
			err = werr // a decision's own failure, with its index
		}
		if err != nil {
			return rep.fail("decisions", err), nil
		}
		rep.found["decisions"], _ = dec.CosignedCheckpoint()
		if st.Decisions != nil {
			if _, err := dec.CheckConsistent(st.Decisions.checkpoint(), cp); err != nil {
				return rep.fail("decisions", err), nil
			}
		}
		rep.DecisionLog = summarize(cp)
		rep.DecisionLog.Signed = string(rep.found["decisions"])
		rep.EntriesVerified += cp.Size
		p, ok, err := ledger.RunnerKeyProtection(dir)
		if err != nil {
			return rep.fail("decisions", err), nil
		}
		if ok {
			rep.RunnerKeyProtection = p.String()
		}
	}
	if o.Progress != nil {
		o.Progress(rep.progressDone, rep.progressTotal)
	}
	return rep, rep.finish(o.StateFile)
}

// AuditExport is Audit for an export file (writ ledger export), fully
// offline: each section's entries are hashed as they stream past and
// checked against its signed checkpoint, authority records are replayed,
// decisions counted, and the prefix of each log at the size in the
// auditor's state file must have the trusted root.
func AuditExport(path string, o AuditOptions) (*Report, error) {
	rep, st, err := newAudit(o)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	rep.opts.Progress = nil // counted in bytes, not entries
	x, err := replica.NewExportReader(&ledger.ProgressReader{R: f, Progress: o.Progress, Total: size})
	if err != nil {
		return nil, err
	}
	sawDecisions := false
	var authCP *formats.Checkpoint
	for {
		sec, err := x.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return rep.fail("export", err), nil
		}
		if (sec.Name == "decisions" && (sawDecisions || authCP == nil)) || (sec.Name == "authority" && authCP != nil) ||
			isDecisionOrigin(sec.Origin) != (sec.Name == "decisions") {
			return rep.fail("export", fmt.Errorf("%w: sections must be one authority log, then at most one decision log, each with its own kind of origin (found %s, origin %s)", replica.ErrExport, sec.Name, sec.Origin)), nil
		}
		given, remembered := o.AuthorityVKey, st.AuthorityVKey
		if sec.Name == "decisions" {
			given, remembered = o.DecisionsVKey, st.DecisionsVKey
		}
		tk, vkey, err := pickVKey(sec.Name, given, remembered, sec.VKey)
		if err != nil {
			return rep.fail(sec.Name, err), nil
		}
		trusted := st.Authority
		st0 := delegation.NewState()
		fn, wait := parallelApply(st0, rep.authorityEvent)
		if sec.Name == "decisions" {
			sawDecisions = true
			if err := checkDecisionOrigin(authCP.Origin, sec.Origin, vkey, sec.VKey); err != nil {
				return rep.fail("decisions", err), nil
			}
			final := *authCP
			bind := &authorityBinding{size: final.Size, rootAt: func(n int64) (tlog.Hash, bool, error) { return final.Hash, n == final.Size, nil }}
			wait() // no authority entries in this section
			trusted = st.Decisions
			fn, wait = rep.tallyBound(bind)
			rep.decisionsVKey, rep.Trust.Decisions = vkey, tk
		} else {
			rep.authorityVKey, rep.Trust.Authority = vkey, tk
		}
		prefix := &prefixCheck{trusted: trusted}
		rep.found[sec.Name] = []byte(sec.Checkpoint)
		cp, err := x.VerifySection(sec, vkey, rep.counting(prefix.wrap(fn)))
		if werr := wait(); werr != nil {
			err = werr // an entry's own refusal or failure, with its index
		}
		if err == nil {
			err = prefix.check(cp)
		}
		if err == nil && sec.Name == "authority" {
			rep.Trust.FirstRoot = firstRoot(st0)
			err = Trust{TrustRoot: o.TrustRoot}.checkRoot(&Authority{State: st0})
		}
		if err == nil && sec.Name == "authority" && o.Policy != nil {
			var w formats.Witnessing
			w, err = o.Policy.Check([]byte(sec.Checkpoint), vkey, rep.opts.Now())
			rep.Witnessing = &w
		}
		if err != nil {
			return rep.fail(sec.Name, err), nil
		}
		if sec.Name == "decisions" {
			rep.DecisionLog = summarize(cp)
			rep.DecisionLog.Signed = sec.Checkpoint
		} else {
			rep.Authority = summarize(cp)
			rep.Authority.Signed = sec.Checkpoint
			rep.AuthorityEntries = cp.Size
			authCP = &cp
		}
		rep.EntriesVerified += cp.Size
	}
	if rep.Authority == nil {
		return rep.fail("export", errors.New("the export has no authority log")), nil
	}
	if !sawDecisions && (o.DecisionsVKey != "" || st.Decisions != nil) {
		return rep.fail("decisions", exportLacksDecisions(o, st)), nil
	}
	if o.Progress != nil {
		o.Progress(size, size)
	}
	return rep, rep.finish(o.StateFile)
}

func newAudit(o AuditOptions) (*Report, *auditState, error) {
	rep := &Report{ByVerdict: map[string]int64{}, ByRule: map[string]int64{}, admitted: map[[16]byte]int64{}, marks: map[string]heldMark{},
		Traffic: newTraffic(), Trust: &AuditTrust{TrustRoot: o.TrustRoot}, opts: o, found: map[string][]byte{}}
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
	st, err := readState(o.StateFile)
	rep.state = st
	return rep, st, err
}

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
	rep.Decisions, rep.WouldRefuse, rep.Traffic = 0, 0, nil
	rep.ByVerdict, rep.ByRule = map[string]int64{}, map[string]int64{}
	return rep
}

// finish marks the audit good and saves the new trusted checkpoints.
func (rep *Report) finish(stateFile string) error {
	rep.OK = true
	rep.Trust.setIndependent()
	rep.Traffic.finish(rep.Decisions, rep.opts, rep.now)
	if stateFile == "" {
		return nil
	}
	return writeState(stateFile, &auditState{Authority: logSignedOnly(rep.Authority, rep.authorityVKey),
		Decisions: logSignedOnly(rep.DecisionLog, rep.decisionsVKey), AuthorityVKey: rep.authorityVKey, DecisionsVKey: rep.decisionsVKey})
}

// logSignedOnly is c for the auditor's state: its signed note reduced to
// what the log key signed (formats.LogSigned), without the witness
// cosignatures, which nothing verified without a policy and whose size
// the writer and its witnesses choose. The state then stays small and
// holds only what a later check can verify under the log key.
func logSignedOnly(c *CheckpointSummary, vkey string) *CheckpointSummary {
	if c == nil {
		return nil
	}
	out := *c
	out.Signed = ""
	if b, err := formats.LogSigned([]byte(c.Signed), vkey); err == nil {
		out.Signed = string(b)
	}
	return &out
}

// provenRoot returns the root of the first n entries of the authority log
// that verified as cp, read from the log's stored hashes and proven a
// prefix of cp's root (ledger.Log.CheckConsistent, RFC 9162 §2.1.4):
// stored hashes are not believed on their own.
func provenRoot(auth *ledger.Log, cp formats.Checkpoint, n int64) (tlog.Hash, bool, error) {
	h, err := auth.TreeHash(n)
	if err != nil {
		return h, false, err
	}
	if _, err := auth.CheckConsistent(formats.Checkpoint{Origin: cp.Origin, Size: n, Hash: h}, cp); err != nil {
		return h, false, err
	}
	return h, true, nil
}

// authorityEvent notes authority that ended in the period.
func (rep *Report) authorityEvent(a *delegation.Applied) {
	rep.Traffic.authorityEvent(rep.opts, a, rep.opts.Now())
}

// count counts decision i, and refuses an instruction id admitted twice.
func (rep *Report) count(i int64, d *schemas.Decision) error {
	if admitted := admittedID(d); admitted != "" {
		// A runner admits an instruction id once (RuleReplay): a second
		// admission means its replay memory was removed or bypassed.
		var id [16]byte
		if _, err := hex.Decode(id[:], []byte(admitted)); err != nil {
			return &delegation.RecordError{Index: i, Rule: delegation.RuleMalformed, Err: err}
		}
		if first, ok := rep.admitted[id]; ok {
			return &delegation.RecordError{Index: i, Rule: RuleReplay, Err: fmt.Errorf("instruction %s was admitted twice, at decisions %d and %d: the runner's replay memory was removed or bypassed", d.InstructionID, first, i)}
		}
		rep.admitted[id] = i
	}
	if err := rep.checkMarks(i, d); err != nil {
		return err
	}
	if !rep.opts.inPeriod(d.Time) {
		rep.Traffic.OutsidePeriod++
		return nil
	}
	rep.Traffic.add(i, d)
	rep.ByVerdict[string(d.Verdict)]++
	rep.ByRule[d.Rule]++
	rep.Decisions++
	if d.Verdict != Refused && d.Rule != RuleOK {
		rep.WouldRefuse++
	}
	return nil
}

// heldMark is an artifact's high-water mark and the decision that
// recorded it.
type heldMark struct {
	version string
	index   int64
}

// checkMarks refuses a decision that records a lower high-water mark for
// an artifact than an earlier decision did: a runner's marks only rise, so
// a fall means its memory of the artifact was removed or bypassed, and a
// rollback may have run.
func (rep *Report) checkMarks(i int64, d *schemas.Decision) error {
	for a, v := range d.HighWater {
		prev, ok := rep.marks[a]
		if ok && semver.Compare(v, prev.version) < 0 {
			return &delegation.RecordError{Index: i, Rule: RuleRollback, Err: fmt.Errorf(
				"the high-water mark of %s fell from %s (decision %d) to %s: the runner's memory of it was removed or bypassed", a, prev.version, prev.index, v)}
		}
		if !ok || semver.Compare(v, prev.version) > 0 {
			rep.marks[a] = heldMark{v, i}
		}
	}
	return nil
}

func failure(log string, err error) *AuditFailure {
	f := &AuditFailure{Log: log, Index: -1, Error: err.Error(), Cause: err}
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
		f.Rule = RuleLedgerUnwitnessed
	}
	if errors.As(err, &inc) {
		ev := inc.Evidence()
		f.Evidence = &ev
	}
	return f
}
