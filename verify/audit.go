package verify

import (
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/schemas"
)

// AuditOptions name the checkpoint verifier keys the auditor trusts. An
// empty key means the key stored in the log itself, which proves the log
// is self-consistent but not whose it is.
type AuditOptions struct {
	AuthorityVKey string
	DecisionsVKey string
}

// CheckpointSummary is a verified checkpoint, for reports.
type CheckpointSummary struct {
	Origin   string `json:"origin"`
	Size     int64  `json:"size"`
	RootHash string `json:"root_hash"` // lowercase hex
}

func summarize(c ledger.Checkpoint) *CheckpointSummary {
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
}

// AuditFailure is the evidence of a failed audit: which log, which entry
// (-1 when not one entry), and the error.
type AuditFailure struct {
	Log   string `json:"log"` // "authority" or "decisions"
	Index int64  `json:"index"`
	Error string `json:"error"`
}

// Audit verifies the ledger at dir end to end, then counts its decisions.
// Verification: the authority log's entries, tree and signed checkpoint
// (ledger.Log.Verify), every entry's signatures and authority replayed in
// order (LoadAuthority), then the decision log's tree and checkpoint and
// every decision record decoded strictly. Any failure stops the audit and
// is reported in Report.Failure with OK false; the error return is only
// for a ledger that cannot be opened at all.
func Audit(dir string, o AuditOptions) (*Report, error) {
	rep := &Report{ByVerdict: map[string]int64{}, ByRule: map[string]int64{}}
	for _, v := range schemas.Verdicts {
		rep.ByVerdict[v] = 0
	}
	auth, err := ledger.OpenAuthority(dir, nil)
	if err != nil {
		return nil, err
	}
	vkey := o.AuthorityVKey
	if vkey == "" {
		vkey = auth.VerifierKey()
	}
	a, err := LoadAuthority(auth, vkey)
	auth.Close()
	if err != nil {
		rep.Failure = failure("authority", err)
		return rep, nil
	}
	rep.Authority = summarize(a.Checkpoint)
	rep.AuthorityEntries = a.Checkpoint.Size
	rep.EntriesVerified = a.Checkpoint.Size
	has, err := ledger.HasDecisions(dir, o.DecisionsVKey != "")
	if err != nil {
		rep.Failure = failure("decisions", err)
		return rep, nil
	}
	if !has {
		rep.OK = true
		return rep, nil
	}
	dec, err := ledger.OpenDecisionsReadOnly(dir)
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	vkey = o.DecisionsVKey
	if vkey == "" {
		vkey = dec.VerifierKey()
	}
	cp, err := dec.Verify(vkey, func(i int64, entry []byte) error {
		rec, err := schemas.Decode(schemas.KindDecision, entry)
		if err != nil {
			return &delegation.RecordError{Index: i, Rule: delegation.RuleMalformed, Err: err}
		}
		d := rec.(*schemas.Decision)
		rep.ByVerdict[d.Verdict]++
		rep.ByRule[d.Rule]++
		rep.Decisions++
		if d.Verdict != "refused" && d.Rule != RuleOK {
			rep.WouldRefuse++
		}
		return nil
	})
	if err != nil {
		rep.Failure = failure("decisions", err)
		return rep, nil
	}
	rep.DecisionLog = summarize(cp)
	rep.EntriesVerified += cp.Size
	rep.OK = true
	return rep, nil
}

func failure(log string, err error) *AuditFailure {
	f := &AuditFailure{Log: log, Index: -1, Error: err.Error()}
	var ie *ledger.IntegrityError
	var re *delegation.RecordError
	switch {
	case errors.As(err, &ie):
		f.Index = ie.Index
	case errors.As(err, &re):
		f.Index = re.Index
	}
	return f
}
