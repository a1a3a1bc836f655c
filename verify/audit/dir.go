package audit

import (
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/internal/replay"
	"golang.org/x/mod/sumdb/tlog"
)

// Dir is the ledger directory at path as an audit Source: both logs are
// read in place (read-only), the authority log's checkpoint history
// included, and each is proven consistent with the auditor's state by a
// proof from its stored hashes. Options.Progress counts entries verified
// of both logs' sizes, every ProgressEvery entries and at the end. The
// runner key's protection, as the directory states it, is reported.
func Dir(path string) Source { return dirSource(path) }

type dirSource string

type dirReader struct {
	dir       string
	rep       *Report
	auth, dec *ledger.Log
}

func (d dirSource) open(rep *Report) (reader, error) {
	dir := string(d)
	auth, err := ledgerdir.OpenAuthority(dir, nil)
	if err != nil {
		return nil, err
	}
	rep.progressTotal = auth.Size()
	if has, _ := ledgerdir.HasDecisions(dir, false); has {
		if dec, err := ledgerdir.OpenDecisionsReadOnly(dir); err == nil {
			rep.progressTotal += dec.Size()
			dec.Close()
		}
	}
	return &dirReader{dir: dir, rep: rep, auth: auth}, nil
}

func (r *dirReader) authority() (formats.Checkpoint, error) {
	return r.rep.verifiedAuthority(&dirLog{l: r.auth, history: true})
}

// decisions reopens the authority log first: the replayed state is not
// needed for the decisions, and closing unmaps the tables whose pages
// the verification made resident; a fresh read-only open serves the few
// tree hashes the decisions need, each proven against the verified root.
func (r *dirReader) decisions(formats.Checkpoint) (auditLog, error) {
	r.auth.Close()
	auth, err := ledgerdir.OpenAuthority(r.dir, nil)
	if err != nil {
		r.auth = nil
		return nil, err
	}
	r.auth = auth
	return r.decisionLog()
}

// decisionLog opens the directory's decision log, read-only, when there
// is one or one is expected (decisionsExpected).
func (r *dirReader) decisionLog() (auditLog, error) {
	has, err := decisionsExpected(r.dir, r.rep.opts, r.rep.state)
	if err != nil {
		return nil, &failed{"decisions", err}
	}
	if !has {
		return nil, nil
	}
	if r.dec, err = ledgerdir.OpenDecisionsReadOnly(r.dir); err != nil {
		return nil, err
	}
	return &dirLog{l: r.dec}, nil
}

func (r *dirReader) root(cp formats.Checkpoint, n int64) (tlog.Hash, bool, error) {
	return provenRoot(r.auth, cp, n)
}

func (r *dirReader) finish(rep *Report) error {
	if r.dec != nil {
		p, ok, err := keys.RunnerProtection(r.dir)
		if err != nil {
			return &failed{"decisions", err}
		}
		if ok {
			rep.RunnerKeyProtection = p.String()
		}
	}
	if rep.opts.Progress != nil {
		rep.opts.Progress(rep.progressDone, rep.progressTotal)
	}
	return nil
}

func (r *dirReader) close() {
	if r.dec != nil {
		r.dec.Close()
	}
	if r.auth != nil {
		r.auth.Close()
	}
}

// dirLog is one log of a ledger directory; history marks the authority
// log, which must keep its checkpoint history.
type dirLog struct {
	l                 *ledger.Log
	history, verified bool
}

func (d *dirLog) vkey() string   { return d.l.VerifierKey() }
func (d *dirLog) origin() string { return d.l.Origin() }

func (d *dirLog) signed() []byte {
	if !d.verified {
		return nil
	}
	b, _ := d.l.CosignedCheckpoint()
	return b
}

func (d *dirLog) verify(k *formats.LogKey, _ *CheckpointSummary, fn ledger.EntryFunc, wait func() error) (formats.Checkpoint, error) {
	if d.history {
		if err := replay.RequireHistory(d.l); err != nil {
			wait()
			return formats.Checkpoint{}, err
		}
	}
	cp, err := d.l.Verify(k, fn)
	if werr := wait(); werr != nil {
		err = werr // the entry's own refusal, with its index
	}
	d.verified = err == nil
	return cp, err
}

func (d *dirLog) witnessed(p *formats.Policy, k *formats.LogKey, cp formats.Checkpoint, now func() (time.Time, error)) (*formats.Witnessing, error) {
	return verify.Trust{Policy: p}.CheckWitnessed(d.l, k, cp, now)
}

func (d *dirLog) consistent(trusted *CheckpointSummary, cp formats.Checkpoint) error {
	if trusted == nil {
		return nil
	}
	_, err := d.l.CheckConsistent(trusted.checkpoint(), cp)
	return err
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

// stateIndex is the authority log, whose state index the audit compares
// with its replay.
func (d *dirLog) stateIndex() *ledger.Log {
	if d.history {
		return d.l
	}
	return nil
}
