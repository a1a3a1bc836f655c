package runner

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/verify"
)

// ErrNotRecorded wraps every failure to record a decision: the verdict
// stands but is not in the decision log, so the dispatch must not run.
var ErrNotRecorded = errors.New("decision not recorded; the dispatch must not run")

// ErrMachineChanged: a runner's decision log holds decisions for another
// machine name than the one it is given (a mistyped --machine would make
// every dispatch a recorded wrong-machine refusal, and a phantom machine
// in every audit); nothing is judged or recorded. verify.Config's
// RenameMachine changes the name on purpose.
var ErrMachineChanged = errors.New("this runner decides for another machine")

// Runner is a runner's admission at its ledger directory, held open: the
// decision log (locked by this process, signed by the runner key), the
// runner's memory read from it (the authority checkpoint it trusts, its
// high-water mark for each artifact, the instruction ids it admitted and
// the work claims it recorded), and a verified snapshot of the authority log, rebuilt when the
// log's files change. Admit is safe for concurrent use: checks run in
// parallel, and each decision is fixed and queued for the decision log
// under one lock, so no two admissions of one instruction id, and no two
// claims on one stream, can both pass; the fsync is shared by a batch.
type Runner struct {
	dir   string
	trust verify.Trust
	cfg   verify.Config
	dec   *ledger.Log

	loadMu      sync.Mutex // serializes snapshot rebuilds; guards good and locked*
	good        *formats.Checkpoint
	snap        atomic.Pointer[snapshot]
	lockedSig   string    // the changed log a writer held at the last rebuild
	lockedSince time.Time // when that was first seen

	marksMu sync.Mutex        // guards marks
	marks   map[string]string // high-water marks read or recorded by this process: artifact → version ("" none)

	mu            sync.Mutex // guards everything below
	trusted       *formats.Checkpoint
	hwGen         uint64 // counts changes of marks made by this process's decisions
	pendingIDs    map[string]int
	pendingClaims map[string]*verify.HeldClaim
	broken        error
}

// Open opens the runner at the ledger directory dir: it opens the
// decision log (unlocking the runner key with kp, or creating it on first
// use), reads the runner's memory from its latest decision (proven against
// the runner's signed checkpoint), and verifies the authority log under
// trust (see verify.Trust). cfg carries the runner's machine, mode, platform,
// clock, ledger-age limit, tightened rules and receipt requirement; its
// HighWater, LedgerTime, History and Receipts are the Runner's to set.
//
// An authority log that fails verification does not fail Open: every
// admission is then refused under rules.LedgerUnverified, rules.RootUntrusted
// or rules.LedgerInconsistent, with the evidence, and recorded. Errors: a
// ledger directory that cannot be opened (ledger.ErrNotALog,
// ledger.ErrLocked, key errors), or ErrNotRecorded wrapping a decision log
// that is damaged or whose latest decision cannot be read.
func Open(dir string, trust verify.Trust, kp ledgerdir.KeyParams, cfg verify.Config) (*Runner, error) {
	origin := ""
	if auth, err := ledger.OpenReadOnly(filepath.Join(dir, ledgerdir.AuthorityDir)); err == nil {
		origin = auth.Origin()
		if trust.VKey == nil {
			trust.VKey = auth.Key()
		}
		auth.Close()
	} else if !errors.Is(err, ledger.ErrTampered) {
		return nil, err
	}
	dec, err := ledgerdir.OpenDecisions(dir, origin, kp)
	if err != nil {
		if errors.Is(err, ledger.ErrTampered) {
			return nil, fmt.Errorf("%w: decision log: %w", ErrNotRecorded, err)
		}
		return nil, err
	}
	r := &Runner{dir: dir, trust: trust, cfg: cfg, dec: dec, marks: map[string]string{}, pendingIDs: map[string]int{}, pendingClaims: map[string]*verify.HeldClaim{}}
	if err := rebuildIndex(dec); err != nil {
		dec.Close()
		return nil, fmt.Errorf("%w: %w", ErrNotRecorded, err)
	}
	r.trusted, err = LastTrusted(dec)
	if err != nil {
		dec.Close()
		return nil, fmt.Errorf("%w: reading the last decision: %w", ErrNotRecorded, err)
	}
	if err := sameMachine(dec, cfg); err != nil {
		dec.Close()
		return nil, err
	}
	r.good = r.trusted
	if _, err := r.snapshot(); err != nil {
		dec.Close()
		return nil, err
	}
	return r, nil
}

// now reads the runner's clock; a clock that fails is an error, not a
// panic (the admission reports the same failure as rules.Internal).
func (r *Runner) now() (t time.Time, err error) {
	if r.cfg.Now == nil {
		return time.Now(), nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the runner's clock failed: %v", p)
		}
	}()
	return r.cfg.Now(), nil
}

// maxLockWait bounds how long admissions wait, in all, for another
// process to release an authority log that changed.
const maxLockWait = 1500 * time.Millisecond

// Close closes the decision log. Admissions still in flight finish first.
func (r *Runner) Close() error { return r.dec.Close() }

// snapshot returns the current authority snapshot, rebuilding it first if
// the authority log's files changed since it was built. While another
// process holds the log (an import or append in progress) the current
// snapshot is kept; the next admission looks again.
func (r *Runner) snapshot() (*snapshot, error) {
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	cur := r.snap.Load()
	sig := dirSignature(filepath.Join(r.dir, ledgerdir.AuthorityDir))
	if cur != nil && cur.sig == sig && !cur.recheckDue(r.now) {
		return cur, nil
	}
	r.mu.Lock()
	trusted := r.trusted
	r.mu.Unlock()
	s, err := loadSnapshot(r.dir, r.trust, r.now, r.good, trusted)
	if errors.Is(err, ledger.ErrLocked) && cur != nil {
		// A writer holds the log it changed. Wait for it, briefly, once
		// per change: admissions arriving meanwhile do not each wait again.
		if r.lockedSig != sig {
			r.lockedSig, r.lockedSince = sig, time.Now()
		}
		for wait := 10 * time.Millisecond; errors.Is(err, ledger.ErrLocked) && time.Since(r.lockedSince) < maxLockWait; wait *= 2 {
			time.Sleep(min(wait, maxLockWait-time.Since(r.lockedSince)))
			s, err = loadSnapshot(r.dir, r.trust, r.now, r.good, trusted)
		}
	}
	switch {
	case errors.Is(err, ledger.ErrLocked) && cur != nil:
		// The log changed and cannot be read: deciding on the old state
		// could miss a revocation. Refuse this one; the next looks again.
		return &snapshot{transient: true, rule: rules.LedgerUnverified,
			err: fmt.Errorf("the authority log changed since this runner last read it, and another process still holds it; refusing rather than deciding on the old state (retry when that process is done): %w", err)}, nil
	case err != nil:
		return nil, err
	}
	r.lockedSig = ""
	if s.note != "" && r.cfg.Note != nil {
		r.cfg.Note(s.note)
	}
	if s.err == nil && s.cp.Size > 0 {
		cp := s.cp
		r.good = &cp // every later snapshot must extend this one
	}
	r.snap.Store(s)
	return s, nil
}
