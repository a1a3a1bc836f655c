package runner

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

// Lookup keys the runner writes beside its decisions (ledger.Log.EnqueueWithKeys).
const (
	keyReplay = "replay/" // + instruction id: the decision that admitted it
	keyClaim  = "claim/"  // + stream: the latest admitted decision with a work claim on it
	keyMark   = "mark/"   // + artifact: the latest decision recording its high-water mark
)

// Admit decides dispatch d against the runner's current authority
// snapshot and memory, and records the decision in the decision log
// before returning: a verdict is never returned for a decision that is
// not durable, except with ErrNotRecorded. The decision records the
// authority checkpoint the runner trusts from now on (the snapshot's when
// it verified, the previous one otherwise), the high-water marks, and the
// instruction's work claim when it was admitted.
//
// It returns the verdict and its decision index. Errors: ErrNotRecorded
// wrapping why the decision could not be recorded, with the verdict still
// returned (the dispatch must not run). After a failed commit the Runner
// refuses everything with ErrNotRecorded; it must be reopened.
func (r *Runner) Admit(d verify.Dispatch) (*verify.Verdict, int64, error) {
	s, err := r.safeSnapshot()
	if err != nil {
		v := verify.RefuseLedger(r.cfg, d, rules.Internal, err)
		return v, 0, fmt.Errorf("%w: %w", ErrNotRecorded, err)
	}
	r.mu.Lock()
	gen := r.hwGen
	r.mu.Unlock()
	c := r.check(s, d) // outside the lock: hashing runs in parallel

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.broken != nil {
		v := verify.RefuseLedger(r.cfg, d, rules.Internal, r.broken)
		return v, 0, fmt.Errorf("%w: an earlier commit failed: %w", ErrNotRecorded, r.broken)
	}
	if cur := r.snap.Load(); !s.transient && (cur != s || gen != r.hwGen) {
		// A newer authority snapshot or higher marks arrived meanwhile:
		// decide again against them, so that no decision is recorded
		// against a state the runner has already moved past.
		s = cur
		c = r.check(s, d)
	}
	v := c.Decide(runnerHistory{r})
	var next *formats.Checkpoint
	if s.err == nil && s.cp.Size > 0 {
		cp := s.cp
		next = &cp
	} else {
		next = r.trusted
	}
	if next != nil {
		v.AuthoritySize, v.AuthorityRoot = next.Size, hex.EncodeToString(next.Hash[:])
	}
	rec := verify.Decision(v)
	b, err := schemas.Encode(rec)
	if err != nil {
		// A decision that cannot be recorded as it stands is a refusal,
		// and the refusal is recorded: never admit what the log lacks.
		v = c.Unrecordable(v, err)
		rec = verify.Decision(v)
		if b, err = schemas.Encode(rec); err != nil {
			return notRecorded(v), 0, fmt.Errorf("%w: encoding decision: %w", ErrNotRecorded, err)
		}
	}
	return r.record(v, rec, b, next)
}

// record queues decision rec (encoded as b) of verdict v for the
// decision log, moves what the runner remembers (the admitted id, the
// claim, the marks, the trusted checkpoint next) at once, and waits for
// the commit outside the lock. It runs under r.mu, and returns with it
// held.
func (r *Runner) record(v *verify.Verdict, rec *schemas.Decision, b []byte, next *formats.Checkpoint) (*verify.Verdict, int64, error) {
	keys := append(indexKeys(rec), keyIndexed)
	id := verify.AdmittedID(rec)
	wait, err := r.dec.EnqueueWithKeys(b, keys)
	if err != nil {
		return notRecorded(v), 0, fmt.Errorf("%w: %w", ErrNotRecorded, err)
	}
	// Queued in log order: what the runner remembers moves now, so that
	// the next admission sees this one even before its fsync.
	if id != "" {
		r.pendingIDs[id]++
	}
	var held *verify.HeldClaim
	if rec.Claim != nil {
		held = &verify.HeldClaim{Claim: *rec.Claim, Signer: rec.Signer, Index: -1}
		r.pendingClaims[rec.Stream] = held
	}
	if r.remember(v.HighWater) {
		r.hwGen++
	}
	r.trusted = next
	r.mu.Unlock()
	committing := time.Now()
	index, err := wait()
	v.RecordTime = time.Since(committing)
	r.mu.Lock()
	if id != "" {
		if r.pendingIDs[id]--; r.pendingIDs[id] <= 0 {
			delete(r.pendingIDs, id)
		}
	}
	if held != nil && r.pendingClaims[rec.Stream] == held {
		delete(r.pendingClaims, rec.Stream)
	}
	if err != nil {
		r.broken = err
		return notRecorded(v), 0, fmt.Errorf("%w: %w", ErrNotRecorded, err)
	}
	return v, index, nil
}

// safeSnapshot is snapshot with a panic turned into a refusal under
// rules.Internal for this admission (recorded like any other).
func (r *Runner) safeSnapshot() (s *snapshot, err error) {
	defer func() {
		if p := recover(); p != nil {
			s, err = &snapshot{transient: true, rule: rules.Internal, err: fmt.Errorf("internal error reading the authority log: %v", p)}, nil
		}
	}()
	return r.snapshot()
}

// check runs every check of d except the runner's history against
// snapshot s and the runner's high-water marks.
func (r *Runner) check(s *snapshot, d verify.Dispatch) *verify.Checked {
	cfg := r.cfg
	cfg.HighWater, cfg.LedgerTime, cfg.LedgerTimeWitnessed, cfg.History = runnerMarks{r}, s.ledgerTime, s.witnessed, nil
	if s.err != nil {
		return verify.Refusing(cfg, d, s.rule, s.err)
	}
	cfg.Receipts = s
	return verify.Check(s.state, cfg, d)
}

// runnerHistory is the Runner's History: decisions queued by this process
// first, then the decision log's lookup keys, each proven by reading the
// decision it points to against the runner's signed checkpoint. Its
// methods run under Runner.mu.
type runnerHistory struct{ r *Runner }

// Admitted implements verify.History. A pending decision has index -1.
func (h runnerHistory) Admitted(id string) (int64, bool, error) {
	if h.r.pendingIDs[id] > 0 {
		return -1, true, nil
	}
	i, d, err := h.lookup(keyReplay + id)
	if err != nil || d == nil {
		return 0, false, err
	}
	if d.InstructionID != id || d.Verdict == verify.Refused {
		return 0, false, fmt.Errorf("the decision log's index says instruction %s was admitted at decision %d, which records %s %s", id, i, d.Verdict, d.InstructionID)
	}
	return i, true, nil
}

// Claim implements verify.History.
func (h runnerHistory) Claim(stream string) (*verify.HeldClaim, error) {
	if c := h.r.pendingClaims[stream]; c != nil {
		return c, nil
	}
	i, d, err := h.lookup(keyClaim + stream)
	if err != nil || d == nil {
		return nil, err
	}
	if d.Stream != stream || d.Claim == nil || d.Verdict == verify.Refused {
		return nil, fmt.Errorf("the decision log's index says decision %d holds the work claim on %s, and it does not", i, stream)
	}
	return &verify.HeldClaim{Claim: *d.Claim, Signer: d.Signer, Index: i}, nil
}

// lookup returns the decision a lookup key points to, read through the
// runner's signed checkpoint, or nil when the key is absent.
func (h runnerHistory) lookup(key string) (int64, *schemas.Decision, error) {
	i, ok, err := h.r.dec.Lookup(key)
	if err != nil || !ok {
		return 0, nil, err
	}
	entry, err := h.r.dec.VerifiedEntry(i)
	if err != nil {
		return 0, nil, err
	}
	rec, err := schemas.Decode(schemas.KindDecision, entry)
	if err != nil {
		return 0, nil, fmt.Errorf("decision %d: %w", i, err)
	}
	return i, rec.(*schemas.Decision), nil
}

// AdmitAtLedger is one admission at a ledger directory: Open, Admit,
// Close (see both). It returns the verdict and its decision index; errors
// are those of Open and Admit.
func AdmitAtLedger(dir string, trust verify.Trust, kp ledgerdir.KeyParams, cfg verify.Config, d verify.Dispatch) (*verify.Verdict, int64, error) {
	r, err := Open(dir, trust, kp, cfg)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	return r.Admit(d)
}
