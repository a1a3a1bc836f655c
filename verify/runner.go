package verify

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/ledger"
)

// Trust is what a reader of a ledger trusts from outside it: the
// checkpoint verifier key ("" means the key stored in the ledger, which
// proves only self-consistency) and the digest of the first root record
// ("" means trust on first use).
type Trust struct {
	VKey      string
	TrustRoot string
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
		return fmt.Errorf("the ledger's first root is %s, this reader trusts %s", found, t.TrustRoot)
	}
	return nil
}

// ErrNotRecorded wraps every failure to record a decision: the verdict
// stands but is not in the decision log, so the dispatch must not run.
var ErrNotRecorded = errors.New("decision not recorded; the dispatch must not run")

// AdmitAtLedger is the runner's whole admission at a ledger directory:
// open the decision log (unlocking or, on first use, creating the runner
// key with kp) and read the authority checkpoint this runner trusted at
// its last decision; verify the authority log under trust.VKey and its
// first root against trust.TrustRoot (RuleRootUntrusted); check that it
// extends the trusted checkpoint;
// decide with Admit; and record the decision, with the checkpoint the
// runner trusts from now on. A ledger that fails verification or does not
// extend the trusted checkpoint is refused (RuleLedgerUnverified,
// RuleLedgerInconsistent) and the previous trusted checkpoint is carried
// forward, so trust never moves to a bad ledger.
//
// It returns the verdict and its decision index. Errors: a ledger
// directory that cannot be opened at all (ledger.ErrNotALog, ErrLocked,
// key errors), or ErrNotRecorded wrapping why the decision could not be
// recorded (with the verdict still returned).
func AdmitAtLedger(dir string, trust Trust, kp ledger.KeyParams, cfg Config, d Dispatch) (*Verdict, int64, error) {
	vkey := trust.VKey
	origin := ""
	auth, authErr := ledger.OpenAuthority(dir, nil)
	switch {
	case authErr == nil:
		defer auth.Close()
		origin = auth.Origin()
		if vkey == "" {
			vkey = auth.VerifierKey()
		}
	case !errors.Is(authErr, ledger.ErrTampered):
		return nil, 0, authErr
	}
	dec, err := ledger.OpenDecisions(dir, origin, kp)
	if err != nil {
		if errors.Is(err, ledger.ErrTampered) {
			return nil, 0, fmt.Errorf("%w: decision log: %w", ErrNotRecorded, err)
		}
		return nil, 0, err
	}
	defer dec.Close()
	trusted, err := LastTrusted(dec)
	if err == nil {
		cfg.HighWater, err = HighWater(dec)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%w: reading the last decision: %w", ErrNotRecorded, err)
	}
	trust.VKey = vkey
	v := decide(auth, authErr, trust, trusted, cfg, d)
	index, err := Record(dec, v)
	if err != nil {
		return v, 0, fmt.Errorf("%w: %w", ErrNotRecorded, err)
	}
	return v, index, nil
}

// decide verifies the authority log, checks it against the trusted
// checkpoint, admits, and sets the checkpoint the runner trusts next.
func decide(auth *ledger.Log, authErr error, trust Trust, trusted *ledger.Checkpoint, cfg Config, d Dispatch) *Verdict {
	keep := func(v *Verdict) *Verdict {
		if trusted != nil {
			v.AuthoritySize, v.AuthorityRoot = trusted.Size, hex.EncodeToString(trusted.Hash[:])
		}
		v.HighWater = cfg.HighWater
		return v
	}
	if authErr != nil {
		return keep(RefuseLedger(cfg, d, RuleLedgerUnverified, authErr))
	}
	a, err := LoadAuthority(auth, trust.VKey)
	if err != nil {
		return keep(RefuseLedger(cfg, d, RuleLedgerUnverified, err))
	}
	if err := trust.checkRoot(a); err != nil {
		return keep(RefuseLedger(cfg, d, RuleRootUntrusted, err))
	}
	if trusted != nil {
		if _, err := auth.CheckConsistent(*trusted, a.Checkpoint); err != nil {
			return keep(RefuseLedger(cfg, d, RuleLedgerInconsistent, err))
		}
	}
	if signed, err := auth.Checkpoint(); err == nil {
		if t, err := ledger.CheckpointTime(signed, trust.VKey); err == nil {
			cfg.LedgerTime = t
		}
	}
	v := Admit(a.State, cfg, d)
	if a.Checkpoint.Size > 0 {
		v.AuthoritySize, v.AuthorityRoot = a.Checkpoint.Size, hex.EncodeToString(a.Checkpoint.Hash[:])
	}
	return v
}
