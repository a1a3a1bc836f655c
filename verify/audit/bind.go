package audit

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify/internal/replay"
	"golang.org/x/mod/sumdb/tlog"
)

// errVKeyMismatch: the key given for log ("authority" or "decisions") is
// not the one the auditor's state remembers: a *ledger.TrustError
// (rules.VKeyMismatch, wrapping ledger.ErrVKeyMismatch).
func errVKeyMismatch(log, given, remembered string) error {
	return &ledger.TrustError{Rule: rules.VKeyMismatch, Log: log, What: "the verifier key given is not the one the auditor's state remembers",
		Expected: given, Found: remembered, Err: ledger.ErrVKeyMismatch}
}

// decisionsExpected is ledgerdir.HasDecisions for an audit: a decision log is
// expected when the caller gave its key (o.DecisionsVKey) or the
// auditor's state remembers one. Its absence is deletion evidence (an
// *ledger.IntegrityError) when the state remembers the log or the runner
// key that signs it exists; else, when only a key was given, it refuses
// that key, which signs nothing here (errNoDecisionLog).
func decisionsExpected(dir string, o Options, st *auditState) (bool, error) {
	has, err := ledgerdir.HasDecisions(dir, o.DecisionsVKey != nil || st.Decisions != nil)
	if err != nil && o.DecisionsVKey != nil && st.Decisions == nil && !ledgerdir.RunnerKeyExists(dir) {
		err = errNoDecisionLog(o.DecisionsVKey.String(), err)
	}
	return has, err
}

// exportLacksDecisions is the failure of an export without a decision
// log when one is expected: deletion evidence (an *ledger.IntegrityError)
// when the auditor's state remembers one, else the refusal of the key
// given for it (errNoDecisionLog).
func exportLacksDecisions(o Options, st *auditState) error {
	var err error = &ledger.IntegrityError{Index: -1, What: "decision log missing", Detail: "the export carries no decision log"}
	if st.Decisions == nil {
		err = errNoDecisionLog(o.DecisionsVKey.String(), err)
	}
	return err
}

// errNoDecisionLog refuses a decision log verifier key given for a
// ledger or an export that has no decision log (missing says so): the key
// signs nothing there, a *ledger.TrustError (rules.VKeyMismatch, wrapping
// ledger.ErrVKeyMismatch and missing).
func errNoDecisionLog(given string, missing error) error {
	return &ledger.TrustError{Rule: rules.VKeyMismatch, Log: "decisions", What: "the decision log the verifier key given signs",
		Expected: given, Found: "no decision log", Err: fmt.Errorf("%w: %w", ledger.ErrVKeyMismatch, missing)}
}

// checkDecisionOrigin binds a decision log to its authority log and its
// key: its origin must be the authority origin + "/decisions/" + the first
// 16 hex digits of the key id of vkey, the key that signs its
// checkpoints. own is the key the log (or export section) carries: when
// vkey is another (given, or remembered by the auditor's state) and
// names another origin, the key is refused, a *ledger.TrustError
// (rules.VKeyMismatch), since it is not this log's.
func checkDecisionOrigin(authority, origin, vkey, own string) error {
	pub, err := formats.VerifierPublicKey(vkey)
	if err != nil {
		return err
	}
	want := authority + "/decisions/" + pub.ID()[:16]
	if name, _, _ := strings.Cut(vkey, "+"); origin != want && vkey != own && name != origin {
		return &ledger.TrustError{Rule: rules.VKeyMismatch, Log: "decisions", What: "the verifier key trusted is another log's",
			Expected: vkey, Found: own, Err: ledger.ErrVKeyMismatch}
	}
	if origin != want {
		return &ledger.IntegrityError{Index: -1, What: "decision log origin", Expected: want, Found: origin,
			Detail: "a decision log is named after its authority log and its runner key"}
	}
	return nil
}

// authorityBinding checks the authority checkpoint each decision says
// the runner trusted against the authority log itself: its size is
// within the log, and its root is the log's root at that size (when
// rootAt can compute it; an export's streamed authority log gives only its
// final root).
type authorityBinding struct {
	size     int64
	rootAt   func(n int64) (tlog.Hash, bool, error)
	lastSize int64
	lastRoot string
}

func (b *authorityBinding) check(i int64, d *schemas.Decision) error {
	if d.AuthorityRoot == "" {
		return nil
	}
	if d.AuthoritySize > b.size {
		return &ledger.IntegrityError{Index: i, What: "decision's authority checkpoint", Expected: fmt.Sprintf("size at most %d", b.size),
			Found: fmt.Sprint(d.AuthoritySize), Detail: "the runner trusted an authority log longer than this one"}
	}
	if d.AuthoritySize == b.lastSize && d.AuthorityRoot == b.lastRoot {
		return nil
	}
	root, ok, err := b.rootAt(d.AuthoritySize)
	if err != nil {
		return err
	}
	if ok && hex.EncodeToString(root[:]) != d.AuthorityRoot {
		return &ledger.IntegrityError{Index: i, What: "decision's authority checkpoint", Expected: hex.EncodeToString(root[:]), Found: d.AuthorityRoot,
			Detail: fmt.Sprintf("at size %d, the runner trusted a different authority log from this one (a fork, or a replaced log)", d.AuthoritySize)}
	}
	b.lastSize, b.lastRoot = d.AuthoritySize, d.AuthorityRoot
	return nil
}

// tallyBound counts decisions, checking each one's authority checkpoint
// with b (nil: no check). Decisions are decoded on every core and counted
// in log order; wait returns the first failure, with its index.
func (rep *Report) tallyBound(b *authorityBinding) (ledger.EntryFunc, func() error) {
	type decoded struct {
		d   *schemas.Decision
		err error
	}
	return replay.Ordered(func(entry []byte) decoded {
		rec, err := schemas.Decode(schemas.KindDecision, entry)
		if err != nil {
			return decoded{err: err}
		}
		return decoded{d: rec.(*schemas.Decision)}
	}, func(i int64, x decoded, _ time.Time) error {
		if x.err != nil {
			return &delegation.RecordError{Index: i, Rule: delegation.RuleMalformed, Err: x.err}
		}
		if b != nil {
			if err := b.check(i, x.d); err != nil {
				return err
			}
		}
		return rep.count(i, x.d)
	})
}

// isDecisionOrigin reports whether origin names a decision log.
func isDecisionOrigin(origin string) bool { return strings.Contains(origin, "/decisions/") }
