package verify

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/schemas"
)

// Trust is what a reader of a ledger trusts from outside it: the
// checkpoint verifier key ("" means the key stored in the ledger, which
// proves only self-consistency), the digest of the first root record
// ("" means trust on first use) and the witness policy (nil: no
// cosignature is required).
type Trust struct {
	VKey      string
	TrustRoot string
	// Policy, when set, is the c2sp.org/tlog-policy the authority log's
	// latest checkpoint must meet: its quorum of witnesses cosigned it
	// (RuleLedgerUnwitnessed otherwise). The runner then judges the
	// ledger's age (Config.MaxLedgerAge) by the witnessed time, not the
	// writer's own.
	Policy *formats.Policy
}

// checkWitnessed judges the log's latest checkpoint, with the witness
// cosignatures stored for it, by the policy: the log part must be cp,
// and the quorum must be met at now. It returns what the policy found
// (nil without a policy); its Time is the witnessed time (zero under
// `quorum none`). Errors wrap formats.ErrQuorum (a *formats.QuorumError)
// or formats.ErrPolicyLog.
func (t Trust) checkWitnessed(l *ledger.Log, vkey string, cp formats.Checkpoint, clock func() (time.Time, error)) (*formats.Witnessing, error) {
	if t.Policy == nil {
		return nil, nil
	}
	now, err := clock()
	if err != nil {
		return nil, err
	}
	cosigned, err := l.CosignedCheckpoint()
	if err != nil {
		return nil, err
	}
	got, err := formats.OpenCheckpoint(cosigned, vkey)
	if err != nil {
		return nil, fmt.Errorf("the cosigned checkpoint: %w", err)
	}
	if got != cp {
		return nil, fmt.Errorf("the cosigned checkpoint is not the verified one (%+v)", got)
	}
	w, err := t.Policy.Check(cosigned, vkey, now)
	if err != nil {
		return &w, fmt.Errorf("the authority checkpoint (size %d): %w", cp.Size, err)
	}
	return &w, nil
}

// checkRoot returns an error when the state's first root is not the
// trusted one.
func (t Trust) checkRoot(a *Authority) error {
	if t.TrustRoot == "" {
		return nil
	}
	if roots := a.State.Roots(); len(roots) == 0 || roots[0].Digest != t.TrustRoot {
		found := "none"
		if len(roots) > 0 {
			found = roots[0].Digest
		}
		return rootUntrusted(t.TrustRoot, found)
	}
	return nil
}

// rootUntrusted is the *ledger.TrustError (RuleRootUntrusted, wrapping
// ErrRootUntrusted) of a log whose first root record has the digest
// found, not the trusted one.
func rootUntrusted(trusted, found string) error {
	return &ledger.TrustError{Rule: RuleRootUntrusted, Log: "authority", What: "the first root record's digest",
		Expected: trusted, Found: found, Err: ErrRootUntrusted}
}

// checkFirst is checkRoot on the log's entry 0 alone (proven against its
// signed checkpoint by the caller): the first root is the record at
// index 0, and its digest is that of the entry's bytes.
func (t Trust) checkFirst(first []byte) error {
	if t.TrustRoot == "" {
		return nil
	}
	if found := schemas.SHA256Digest(first); found != t.TrustRoot {
		return rootUntrusted(t.TrustRoot, found)
	}
	return nil
}

// Refusal judges the assertions in t against the latest signed
// checkpoint of the authority log at store (a ledger directory's
// authority store, opened read-only and closed again), without replaying
// the log: it must be signed by t.VKey, its entry 0 (proven against it)
// must be the root t.TrustRoot names, and with the cosignatures stored
// for it, it must meet t.Policy at now (each when set). It returns the
// refusal of the first that does not hold: a *ledger.TrustError
// (RuleVKeyMismatch, RuleRootUntrusted) or an error wrapping
// formats.ErrQuorum or formats.ErrPolicyLog; else nil, also when the log
// cannot be opened or its checkpoint does not verify for another reason
// (that is the caller's to report: a runner refuses each admission, and
// records it, under the rule). Callers use it before they change
// anything: a server before it serves, a repair before it keeps a log.
func (t Trust) Refusal(store string, now time.Time) error {
	if t == (Trust{}) {
		return nil
	}
	l, err := ledger.OpenReadOnly(store)
	if err != nil {
		return nil
	}
	defer l.Close()
	var te *ledger.TrustError
	cp, err := l.TrustedHead(t.VKey)
	if err != nil {
		if errors.As(err, &te) {
			return err
		}
		return nil
	}
	if t.TrustRoot != "" {
		first, err := l.ProvenEntry(0, cp)
		if err != nil {
			return nil
		}
		if err := t.checkFirst(first); err != nil {
			return err
		}
	}
	vkey := t.VKey
	if vkey == "" {
		vkey = l.VerifierKey()
	}
	_, err = t.checkWitnessed(l, vkey, cp, func() (time.Time, error) { return now, nil })
	if errors.Is(err, formats.ErrQuorum) || errors.Is(err, formats.ErrPolicyLog) {
		return err
	}
	return nil
}

// ErrNotRecorded wraps every failure to record a decision: the verdict
// stands but is not in the decision log, so the dispatch must not run.
var ErrNotRecorded = errors.New("decision not recorded; the dispatch must not run")

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
	trust Trust
	cfg   Config
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
	pendingClaims map[string]*HeldClaim
	broken        error
}

// OpenRunner opens the runner at the ledger directory dir: it opens the
// decision log (unlocking the runner key with kp, or creating it on first
// use), reads the runner's memory from its latest decision (proven against
// the runner's signed checkpoint), and verifies the authority log under
// trust (see Trust). cfg carries the runner's machine, mode, platform,
// clock, ledger-age limit, tightened rules and receipt requirement; its
// HighWater, LedgerTime, History and Receipts are the Runner's to set.
//
// An authority log that fails verification does not fail OpenRunner: every
// admission is then refused under RuleLedgerUnverified, RuleRootUntrusted
// or RuleLedgerInconsistent, with the evidence, and recorded. Errors: a
// ledger directory that cannot be opened (ledger.ErrNotALog,
// ledger.ErrLocked, key errors), or ErrNotRecorded wrapping a decision log
// that is damaged or whose latest decision cannot be read.
func OpenRunner(dir string, trust Trust, kp ledger.KeyParams, cfg Config) (*Runner, error) {
	origin := ""
	if auth, err := ledger.OpenReadOnly(filepath.Join(dir, ledger.AuthorityDir)); err == nil {
		origin = auth.Origin()
		if trust.VKey == "" {
			trust.VKey = auth.VerifierKey()
		}
		auth.Close()
	} else if !errors.Is(err, ledger.ErrTampered) {
		return nil, err
	}
	dec, err := ledger.OpenDecisions(dir, origin, kp)
	if err != nil {
		if errors.Is(err, ledger.ErrTampered) {
			return nil, fmt.Errorf("%w: decision log: %w", ErrNotRecorded, err)
		}
		return nil, err
	}
	r := &Runner{dir: dir, trust: trust, cfg: cfg, dec: dec, marks: map[string]string{}, pendingIDs: map[string]int{}, pendingClaims: map[string]*HeldClaim{}}
	if err := rebuildIndex(dec); err != nil {
		dec.Close()
		return nil, fmt.Errorf("%w: %w", ErrNotRecorded, err)
	}
	r.trusted, err = LastTrusted(dec)
	if err != nil {
		dec.Close()
		return nil, fmt.Errorf("%w: reading the last decision: %w", ErrNotRecorded, err)
	}
	r.good = r.trusted
	if _, err := r.snapshot(); err != nil {
		dec.Close()
		return nil, err
	}
	return r, nil
}

// now reads the runner's clock; a clock that fails is an error, not a
// panic (the admission reports the same failure as RuleInternal).
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
	sig := dirSignature(filepath.Join(r.dir, ledger.AuthorityDir))
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
		return &snapshot{transient: true, rule: RuleLedgerUnverified,
			err: fmt.Errorf("the authority log changed since this runner last read it, and another process still holds it; refusing rather than deciding on the old state (retry when that process is done): %w", err)}, nil
	case err != nil:
		return nil, err
	}
	r.lockedSig = ""
	if s.err == nil && s.cp.Size > 0 {
		cp := s.cp
		r.good = &cp // every later snapshot must extend this one
	}
	r.snap.Store(s)
	return s, nil
}
