package audit

import (
	"errors"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/internal/replay"
	"golang.org/x/mod/sumdb/tlog"
)

// Source is what an audit reads a ledger from: a ledger directory (Dir)
// or an export file (ExportFile). Run reads every source the same way;
// a Source only says how its logs are opened, verified and proven
// consistent with the auditor's state. Its methods are this package's.
type Source interface {
	// open starts one audit of the source for rep; its error is a
	// source that cannot be read at all.
	open(rep *Report) (reader, error)
}

// reader is one audit's reading of a Source: the authority log, then
// the decision log, if any. Its errors are *failed (the audit reports
// them) or a source that cannot be read (Run returns them).
type reader interface {
	// authority verifies the authority log for the audit
	// (Report.verifiedAuthority), or takes in a verification of it
	// already made (a fleet's runner: Report.adopt), and returns its
	// verified checkpoint.
	authority() (formats.Checkpoint, error)
	// decisions returns the decision log (nil when there is none and
	// none is expected); authCP is the verified authority checkpoint.
	decisions(authCP formats.Checkpoint) (auditLog, error)
	// root is the root of the first n entries of the authority log that
	// verified as cp, and whether it could be computed.
	root(cp formats.Checkpoint, n int64) (tlog.Hash, bool, error)
	// finish runs the source's last checks after both logs verified.
	finish(rep *Report) error
	close()
}

// auditLog is one log of a source.
type auditLog interface {
	vkey() string   // the verifier key the log carries
	origin() string // its origin, as it states it
	// signed is the log's signed checkpoint, with its cosignatures, as
	// evidence may show it (nil while not yet verified, where the log
	// is read only after).
	signed() []byte
	// verify verifies the log's entries, tree and signed checkpoint under
	// k, handing each entry to fn, then returns wait's error if any;
	// a source that streams its log also checks here that it extends
	// trusted (nil: nothing trusted yet).
	verify(k *formats.LogKey, trusted *CheckpointSummary, fn ledger.EntryFunc, wait func() error) (formats.Checkpoint, error)
	// witnessed judges the verified checkpoint cp by policy p at now.
	witnessed(p *formats.Policy, k *formats.LogKey, cp formats.Checkpoint, now func() (time.Time, error)) (*formats.Witnessing, error)
	// consistent proves the verified log extends trusted (nil: nothing
	// trusted), where verify did not.
	consistent(trusted *CheckpointSummary, cp formats.Checkpoint) error
	// stateIndex is the log whose persisted state index the audit
	// compares with its replay (verify.CheckStateIndex), nil for a log
	// that keeps none (an export's section, a decision log).
	stateIndex() *ledger.Log
}

// failed is a failure the audit reports (Report.Failure) against log.
type failed struct {
	log string
	err error
}

func (f *failed) Error() string { return f.log + ": " + f.err.Error() }

// Run audits the ledger src gives end to end, then counts its decisions.
// Verification: the authority log's entries, tree and signed checkpoint,
// every authority record's signatures and authority replayed in order at
// the time the log accepted it (verify.LoadAuthority's checks), its
// first root (Options.TrustRoot) and witnesses (Options.Policy); then the
// decision log's tree and checkpoint, its origin bound to the authority
// log and its key, every decision record decoded strictly and the
// authority checkpoint each names found in the authority log; and
// consistency of each log with the auditor's state file. Any failure
// stops the audit and is reported in Report.Failure with OK false; the
// error return is only for a source that cannot be read at all (for an
// export, one whose header is not an export's: replica.ErrExport) or a
// state file that cannot be read or written.
func Run(src Source, o Options) (*Report, error) {
	rep, err := newAudit(o)
	if err != nil {
		return nil, err
	}
	r, err := src.open(rep)
	if err != nil {
		return nil, err
	}
	defer r.close()
	var f *failed
	switch err := rep.run(r); {
	case errors.As(err, &f):
		return rep.fail(f.log, f.err), nil
	case err != nil:
		return nil, err
	}
	return rep, rep.finish(o.StateFile)
}

// run verifies the logs r reads, in order.
func (rep *Report) run(r reader) error {
	cp, err := r.authority()
	if err != nil {
		return err
	}
	dec, err := r.decisions(cp)
	if err != nil {
		return err
	}
	if dec != nil {
		rootAt := func(n int64) (tlog.Hash, bool, error) { return r.root(cp, n) }
		if err := rep.verifyDecisions(dec, cp, rootAt); err != nil {
			return &failed{"decisions", err}
		}
	}
	return r.finish(rep)
}

// verifiedAuthority is verifyAuthority, its failure one the audit
// reports against the authority log.
func (rep *Report) verifiedAuthority(l auditLog) (formats.Checkpoint, error) {
	cp, err := rep.verifyAuthority(l)
	if err != nil {
		return cp, &failed{"authority", err}
	}
	return cp, nil
}

// verifyAuthority verifies the authority log l under the key the audit
// trusts for it, replaying every record, and checks its first root, its
// witnesses and its consistency with the auditor's state. It returns the
// verified checkpoint.
func (rep *Report) verifyAuthority(l auditLog) (formats.Checkpoint, error) {
	var cp formats.Checkpoint
	st := rep.state
	tk, vkey, err := pickVKey("authority", rep.opts.AuthorityVKey, st.AuthorityVKey, l.vkey())
	if err != nil {
		return cp, err
	}
	rep.Trust.Authority = tk
	key, err := pickedKey(rep.opts.AuthorityVKey, vkey)
	if err != nil {
		return cp, err
	}
	rep.authorityVKey = key
	state := delegation.NewState()
	marks := &verify.StateMarks{Next: rep.authorityEvent}
	fn, wait := replay.Apply(state, marks.Applied)
	rep.found["authority"] = l.signed()
	if cp, err = l.verify(key, st.Authority, rep.counting(fn), wait); err != nil {
		return cp, err
	}
	if idx := l.stateIndex(); idx != nil {
		if err := verify.CheckStateIndex(idx, state, marks.Marks); err != nil {
			return cp, err
		}
	}
	rep.Trust.FirstRoot = firstRoot(state)
	rep.KeyLabels = state.KeyLabels(MaxKeyLabels)
	if err := (verify.Trust{TrustRoot: rep.opts.TrustRoot}).CheckRoot(state); err != nil {
		return cp, err
	}
	if rep.opts.Policy != nil {
		now := func() (time.Time, error) { return rep.opts.Now(), nil }
		if rep.Witnessing, err = l.witnessed(rep.opts.Policy, key, cp, now); err != nil {
			return cp, err
		}
	}
	rep.found["authority"] = l.signed()
	if err := l.consistent(st.Authority, cp); err != nil {
		return cp, err
	}
	rep.Authority = summarize(cp)
	rep.Authority.Signed = string(rep.found["authority"])
	rep.AuthorityEntries = cp.Size
	rep.EntriesVerified += cp.Size
	return cp, nil
}

// verifyDecisions verifies the decision log l under the key the audit
// trusts for it, bound to the authority log that verified as authCP
// (rootAt gives that log's root at a size), counts its decisions and
// checks its consistency with the auditor's state.
func (rep *Report) verifyDecisions(l auditLog, authCP formats.Checkpoint, rootAt func(int64) (tlog.Hash, bool, error)) error {
	st := rep.state
	tk, vkey, err := pickVKey("decisions", rep.opts.DecisionsVKey, st.DecisionsVKey, l.vkey())
	if err != nil {
		return err
	}
	rep.Trust.Decisions = tk
	if err := checkDecisionOrigin(authCP.Origin, l.origin(), vkey, l.vkey()); err != nil {
		return err
	}
	key, err := pickedKey(rep.opts.DecisionsVKey, vkey)
	if err != nil {
		return err
	}
	rep.decisionsVKey = key
	fn, wait := rep.tallyBound(&authorityBinding{size: authCP.Size, rootAt: rootAt})
	rep.found["decisions"] = l.signed()
	cp, err := l.verify(key, st.Decisions, rep.counting(fn), wait)
	if err != nil {
		return err // a decision's own failure, with its index
	}
	rep.found["decisions"] = l.signed()
	if err := l.consistent(st.Decisions, cp); err != nil {
		return err
	}
	rep.DecisionLog = summarize(cp)
	rep.DecisionLog.Signed = string(rep.found["decisions"])
	rep.EntriesVerified += cp.Size
	return nil
}
