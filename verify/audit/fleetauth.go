package audit

import (
	"slices"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"golang.org/x/mod/sumdb/tlog"
)

// fleetAuthority is a fleet audit's authority log, verified once for all
// its runners: its entries, tree, signed checkpoint and checkpoint
// history, every record's signatures and authority replayed at the time
// the log accepted it, its state index, its first root and its witnesses
// (verifyAuthority, the checks of one audit's authority log). Each
// runner's audit then takes that verification in (Report.adopt) and binds
// the runner's decision log to the one verified checkpoint, reading the
// log's roots at the sizes its decisions name (provenRoot, each proven
// against that checkpoint).
//
// The rule for sharing one verification: an authority log is verified
// once for the audits whose authority input is the same, and only for
// them. The input of a verification is the log itself (its entries,
// tree, history and signed checkpoint) and what it is judged under (the
// verifier key, Options.TrustRoot, Policy, Since, Until and Now); a fleet
// file names one authority log and one key, RunFleet syncs it into one
// replica and audits every runner under the same Options, so every
// runner's input is that one replica, read at one verified checkpoint: one
// verification serves them all. Two inputs that differ in anything (two
// replicas or exports of the same log, at the same or different sizes,
// or one log under another key or trust root) are two verifications: the
// runners that name one are not bound against the other. Every root a
// runner's decisions name is read from the one replica and proven against
// the one verified checkpoint (provenRoot), as a single audit reads it:
// stored hashes are not believed, whoever else reads the cache.
type fleetAuthority struct {
	// once is the report of the one verification, which each runner's
	// report takes in (Report.adopt); cp is the checkpoint it verified.
	once *Report
	cp   formats.Checkpoint
	// err is the authority log's failure, each runner's failure as Run
	// reports it; openErr a replica that could not be opened, each
	// runner's as Run returns it.
	err, openErr error
	// log is the verified replica, open read-only for the runners'
	// roots (nil unless it verified).
	log *ledger.Log
	// done and total are the fleet's progress: the entries verified, of
	// the authority log's and every runner's decision log's.
	done, total int64
}

// verifyFleetAuthority verifies the authority log of the ledger directory
// dir (the fleet's replica) under o, once, as Run verifies a ledger
// directory's; decisions is the entries of the runners' decision logs,
// for progress. The caller closes it.
func verifyFleetAuthority(dir string, o Options, decisions int64) *fleetAuthority {
	a := &fleetAuthority{}
	rep, err := newAudit(o)
	if err != nil {
		a.openErr = err
		return a
	}
	a.once = rep
	auth, err := ledgerdir.OpenAuthority(dir, nil)
	if err != nil {
		a.openErr = err
		return a
	}
	rep.progressTotal = auth.Size() + decisions
	a.cp, a.err = rep.verifyAuthority(&dirLog{l: auth, history: true})
	// Closed and opened again, as dirReader.decisions does: the replay's
	// resident pages are unmapped, and the runners' bindings need only a
	// few tree hashes, each proven against the verified root.
	auth.Close()
	a.done, a.total = rep.progressDone, rep.progressTotal
	if o.Progress != nil {
		o.Progress(a.done, a.total)
	}
	if a.err == nil {
		a.log, a.openErr = ledgerdir.OpenAuthority(dir, nil)
	}
	return a
}

// counted advances the fleet's progress past a runner's decision log of
// size entries, audited into r (nil: not audited): a log whose audit
// stopped at a failure counts whole.
func (a *fleetAuthority) counted(r *Report, size int64) {
	a.done += size
	if r != nil {
		a.done = max(a.done, r.progressDone)
	}
}

func (a *fleetAuthority) close() {
	if a.log != nil {
		a.log.Close()
	}
}

// adopt takes the fleet's one verification of the authority log a into
// rep, leaving rep as verifyAuthority would have (the keys and first root
// trusted, the witnessing, the checkpoint, the entries verified, the
// authority events of the period, the pins' provenance), and returns the verified checkpoint;
// its failure is a's, against the authority log.
func (rep *Report) adopt(a *fleetAuthority) (formats.Checkpoint, error) {
	v := a.once
	if v.Trust.Authority != nil {
		k := *v.Trust.Authority
		rep.Trust.Authority = &k
	}
	if v.Witnessing != nil {
		w := *v.Witnessing
		rep.Witnessing = &w
	}
	rep.Trust.FirstRoot, rep.authorityVKey = v.Trust.FirstRoot, v.authorityVKey
	rep.found["authority"] = v.found["authority"]
	if a.err != nil {
		return a.cp, &failed{"authority", a.err}
	}
	cp := *v.Authority
	rep.Authority = &cp
	rep.AuthorityEntries = v.AuthorityEntries
	rep.EntriesVerified += v.EntriesVerified
	rep.Traffic.AuthorityEvents = slices.Clone(v.Traffic.AuthorityEvents)
	rep.Traffic.AuthorityEventsTotal = v.Traffic.AuthorityEventsTotal
	rep.Provenance = v.Provenance.ForRunner()
	return a.cp, nil
}

// runnerDir is a fleet runner's directory in the cache as an audit
// Source: its decision log read in place as Dir reads it, and bound to
// the fleet's authority log as verified once (fleetAuthority) rather
// than verified again.
type runnerDir struct {
	dir  string
	auth *fleetAuthority
}

// runnerReader is a dirReader whose authority log is the fleet's.
type runnerReader struct {
	*dirReader
	auth *fleetAuthority
}

func (s runnerDir) open(rep *Report) (reader, error) {
	if s.auth.openErr != nil {
		return nil, s.auth.openErr
	}
	rep.progressDone, rep.progressTotal = s.auth.done, s.auth.total
	return &runnerReader{dirReader: &dirReader{dir: s.dir, rep: rep}, auth: s.auth}, nil
}

func (r *runnerReader) authority() (formats.Checkpoint, error) { return r.rep.adopt(r.auth) }

func (r *runnerReader) decisions(formats.Checkpoint) (auditLog, error) { return r.decisionLog() }

func (r *runnerReader) root(cp formats.Checkpoint, n int64) (tlog.Hash, bool, error) {
	return provenRoot(r.auth.log, cp, n)
}
