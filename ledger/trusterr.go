package ledger

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/rules"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// ErrTrust is wrapped by every *TrustError: an assertion the reader was
// given from outside the log (a verifier key, the first root's digest, a
// witness policy) does not hold for the log, or for the replica, cache or
// state the reader keeps.
var ErrTrust = errors.New("a trust assertion does not hold")

// ErrVKeyMismatch is wrapped by the *TrustError of a log whose
// checkpoints are not signed by the verifier key trusted
// (rules.VKeyMismatch): the key given is not the one a replica stores, or
// no signature on the checkpoint is by that key.
var ErrVKeyMismatch = errors.New("the checkpoints are not signed by the trusted verifier key")

// TrustError is the refusal of one trust assertion, with its evidence.
// Rule is the stable rule id (rules.VKeyMismatch, rules.RootUntrusted,
// ...); Log is the log it concerns ("authority", "decisions", or "" when
// unknown); What says what was compared; Expected is what the reader was
// told to trust and Found what the log, replica or state holds (key
// names with their 8-hex key hashes, or sha256: digests). Err is the
// sentinel callers branch on (ErrVKeyMismatch, verify.ErrRootUntrusted)
// and, where there is one, the underlying error. A command that refuses
// under a TrustError has stored nothing.
type TrustError struct {
	Rule     string
	Log      string
	What     string
	Expected string
	Found    string
	Err      error
}

func (e *TrustError) Error() string {
	s := e.What
	if e.Log != "" {
		s = "the " + e.Log + " log: " + s
	}
	return fmt.Sprintf("%s: expected %s, found %s (rule %s)", s, e.Expected, e.Found, e.Rule)
}

// Unwrap returns ErrTrust and Err.
func (e *TrustError) Unwrap() []error { return []error{ErrTrust, e.Err} }

// RuleID returns the stable rule id.
func (e *TrustError) RuleID() string { return e.Rule }

// KeyName gives a verifier key as name+hash, its public part that a
// signature line also names (c2sp.org/signed-note), without the key bytes.
func KeyName(vkey string) string {
	name, rest, _ := strings.Cut(vkey, "+")
	hash, _, _ := strings.Cut(rest, "+")
	return name + "+" + hash
}

// OpenTrusted is OpenCheckpoint that tells a checkpoint signed by another
// key from a forged one: when no signature line names k (its
// name and key hash), the error is a *TrustError (rules.VKeyMismatch,
// wrapping ErrVKeyMismatch and ErrCheckpointSignature) whose Found lists
// the keys that did sign. A signature line of k that does not
// verify stays ErrCheckpointSignature: evidence of tampering, not of a
// wrong key. log names the log for the evidence.
func OpenTrusted(signed []byte, k *formats.LogKey, log string) (formats.Checkpoint, error) {
	cp, err := formats.OpenCheckpoint(signed, k)
	var une *note.UnverifiedNoteError
	if err == nil || !errors.As(err, &une) {
		return cp, err
	}
	var found []string
	for _, s := range une.Note.UnverifiedSigs {
		found = append(found, fmt.Sprintf("%s+%08x", s.Name, s.Hash))
	}
	if len(found) == 0 {
		found = []string{"no signature"}
	}
	return cp, &TrustError{Rule: rules.VKeyMismatch, Log: log, What: "the signed checkpoint's verifier key",
		Expected: KeyName(k.String()), Found: strings.Join(found, ", "), Err: fmt.Errorf("%w: %w", ErrVKeyMismatch, err)}
}

// KeyMismatch is the *TrustError (rules.VKeyMismatch, wrapping
// ErrVKeyMismatch) of the log named log, kept at where, whose stored
// verifier key is not the one given.
func KeyMismatch(log, where, given, stored string) error {
	return &TrustError{Rule: rules.VKeyMismatch, Log: log, What: "the verifier key " + where + " stores",
		Expected: KeyName(given), Found: KeyName(stored), Err: ErrVKeyMismatch}
}

// ProvenEntry returns entry i of the log, proven to be in the tree cp
// signs: its leaf hash, with an inclusion proof read from the stored
// hashes, leads to cp's root (RFC 9162 §2.1.3.2). A reader that holds a
// verified checkpoint uses it to check one entry without replaying the
// log. Errors: an *IntegrityError (wrapping ErrTampered) when the entry
// is not in that tree, and those of Entry and ProveInclusion.
func (l *Log) ProvenEntry(i int64, cp formats.Checkpoint) ([]byte, error) {
	e, err := l.Entry(i)
	if err != nil {
		return nil, err
	}
	p, err := l.ProveInclusion(i, cp.Size)
	if err != nil {
		return nil, err
	}
	leaf := tlog.RecordHash(e)
	p.LeafHash, p.RootHash = leaf, cp.Hash
	if err := p.Verify(); err != nil {
		return nil, &IntegrityError{Index: i, What: "entry not in the signed tree", Expected: hexHash(cp.Hash), Found: hex.EncodeToString(leaf[:]), Detail: err.Error()}
	}
	return e, nil
}
