package verify

import (
	"errors"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
)

// ErrRootUntrusted: a log's first root record is not the one the reader
// was told to trust (--trust-root, rules.RootUntrusted).
var ErrRootUntrusted = errors.New("the ledger's first root is not the trusted one")

// Trust is what a reader of a ledger trusts from outside it, parsed
// where it enters (a flag, a file): the checkpoint verifier key (nil
// means the key stored in the ledger, which proves only
// self-consistency), the digest of the first root record ("" means trust
// on first use) and the witness policy (nil: no cosignature is required).
type Trust struct {
	VKey      *formats.LogKey
	TrustRoot string
	// Policy, when set, is the c2sp.org/tlog-policy the authority log's
	// latest checkpoint must meet: its quorum of witnesses cosigned it
	// (rules.LedgerUnwitnessed otherwise). The runner then judges the
	// ledger's age (Config.MaxLedgerAge) by the witnessed time, not the
	// writer's own.
	Policy *formats.Policy
}

// CheckWitnessed judges the latest checkpoint of the authority log l,
// with the witness cosignatures stored for it, by t.Policy: its log part
// must verify under the log key k and be cp, and the quorum must be met at the
// time clock gives (read once, only under a policy; its error is
// returned as is). It returns what the policy found
// (nil without a policy); its Time is the witnessed time (zero under
// `quorum none`). Errors wrap formats.ErrQuorum (a *formats.QuorumError)
// or formats.ErrPolicyLog.
func (t Trust) CheckWitnessed(l *ledger.Log, k *formats.LogKey, cp formats.Checkpoint, clock func() (time.Time, error)) (*formats.Witnessing, error) {
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
	got, err := formats.OpenCheckpoint(cosigned, k)
	if err != nil {
		return nil, fmt.Errorf("the cosigned checkpoint: %w", err)
	}
	if got != cp {
		return nil, fmt.Errorf("the cosigned checkpoint is not the verified one (%+v)", got)
	}
	w, err := t.Policy.Check(cosigned, k, now)
	if err != nil {
		return &w, fmt.Errorf("the authority checkpoint (size %d): %w", cp.Size, err)
	}
	return &w, nil
}

// CheckRoot returns an error when the first root of the authority state
// st is not the one t.TrustRoot names (nil when TrustRoot is ""): a
// *ledger.TrustError (rules.RootUntrusted) wrapping ErrRootUntrusted, with
// both digests ("none" when st holds no root).
func (t Trust) CheckRoot(st *delegation.State) error {
	if t.TrustRoot == "" {
		return nil
	}
	if roots := st.Roots(); len(roots) == 0 || roots[0].Digest != t.TrustRoot {
		found := "none"
		if len(roots) > 0 {
			found = roots[0].Digest
		}
		return rootUntrusted(t.TrustRoot, found)
	}
	return nil
}

// rootUntrusted is the *ledger.TrustError (rules.RootUntrusted, wrapping
// ErrRootUntrusted) of a log whose first root record has the digest
// found, not the trusted one.
func rootUntrusted(trusted, found string) error {
	return &ledger.TrustError{Rule: rules.RootUntrusted, Log: "authority", What: "the first root record's digest",
		Expected: trusted, Found: found, Err: ErrRootUntrusted}
}

// CheckFirst is CheckRoot on the log's entry 0 alone (proven against its
// signed checkpoint by the caller): the first root is the record at
// index 0, and its digest is that of the entry's bytes. Errors as
// CheckRoot.
func (t Trust) CheckFirst(first []byte) error {
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
// (rules.VKeyMismatch, rules.RootUntrusted) or an error wrapping
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
		if err := t.CheckFirst(first); err != nil {
			return err
		}
	}
	k := t.VKey
	if k == nil {
		k = l.Key()
	}
	_, err = t.CheckWitnessed(l, k, cp, func() (time.Time, error) { return now, nil })
	if errors.Is(err, formats.ErrQuorum) || errors.Is(err, formats.ErrPolicyLog) {
		return err
	}
	return nil
}
