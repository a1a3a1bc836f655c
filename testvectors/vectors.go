package testvectors

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// File is one published vector file (data/*.json).
type File struct {
	Description string   `json:"description"`
	Vectors     []Vector `json:"vectors"`
}

// Vector is one input with its declared result. Each negative vector
// breaks exactly one rule, so an implementation that checks in another
// order still reaches the same error class.
type Vector struct {
	Name    string `json:"name"`
	Comment string `json:"comment"`
	// Kind is the record kind the verifier expects.
	Kind string `json:"kind"`
	// Signed: Input is a COSE envelope (true) or a bare record (false).
	Signed bool `json:"signed"`
	// TrustedKeys are raw Ed25519 public keys (hex) the verifier trusts.
	TrustedKeys []string `json:"trusted_keys,omitempty"`
	// Threshold is how many distinct trusted keys must have signed.
	Threshold int `json:"threshold,omitempty"`
	// Input is the bytes to check, hex.
	Input string `json:"input"`
	// Expect is "valid" or "invalid".
	Expect string `json:"expect"`
	// Error is the error class of an invalid vector (see the package doc);
	// writ gives exactly this class.
	Error string `json:"error,omitempty"`
	// AlsoAcceptable lists classes another implementation may report for
	// an input whose defect is, by construction, visible to more than one
	// rule (a 16-byte input declaring a huge length is also truncated).
	AlsoAcceptable []string `json:"also_acceptable,omitempty"`
	// Record is the decoded record of a valid vector, with CDDL member
	// names; byte strings are base64, as encoding/json writes them.
	Record json.RawMessage `json:"record,omitempty"`
}

// Error classes, in the order Class tests for them.
const (
	ClassTooLarge          = "too-large"
	ClassNonCanonical      = "non-canonical"
	ClassDuplicateKey      = "duplicate-key"
	ClassIndefinite        = "indefinite-length"
	ClassTag               = "tag"
	ClassLimit             = "limit"
	ClassTrailingData      = "trailing-data"
	ClassInvalidUTF8       = "invalid-utf8"
	ClassWrongType         = "wrong-type"
	ClassUnknownField      = "unknown-field"
	ClassUnknownVersion    = "unknown-version"
	ClassNotWellFormed     = "not-well-formed"
	ClassInvalidField      = "invalid-field"
	ClassDuplicateSigner   = "duplicate-signer"
	ClassAlgorithm         = "algorithm"
	ClassInvalidKey        = "invalid-key"
	ClassBadSignature      = "bad-signature"
	ClassMalformedEnvelope = "malformed-envelope"
	ClassMalformed         = "malformed"
	ClassWrongKind         = "wrong-kind"
	ClassUnknownKey        = "unknown-key"
	ClassThreshold         = "threshold"
)

var classes = []struct {
	err   error
	class string
}{
	{schemas.ErrTooLarge, ClassTooLarge},
	{schemas.ErrNonCanonical, ClassNonCanonical},
	{schemas.ErrDuplicateKey, ClassDuplicateKey},
	{schemas.ErrIndefinite, ClassIndefinite},
	{schemas.ErrTag, ClassTag},
	{schemas.ErrLimit, ClassLimit},
	{schemas.ErrTrailingData, ClassTrailingData},
	{schemas.ErrInvalidUTF8, ClassInvalidUTF8},
	{schemas.ErrWrongCBORType, ClassWrongType},
	{schemas.ErrUnknownField, ClassUnknownField},
	{schemas.ErrUnknownVersion, ClassUnknownVersion},
	{schemas.ErrNotWellFormed, ClassNotWellFormed},
	{schemas.ErrInvalid, ClassInvalidField},
	{sign.ErrDuplicateSigner, ClassDuplicateSigner},
	{sign.ErrAlgorithm, ClassAlgorithm},
	{sign.ErrInvalidKey, ClassInvalidKey},
	{sign.ErrBadSignature, ClassBadSignature},
	{sign.ErrMalformedEnvelope, ClassMalformedEnvelope},
	{schemas.ErrMalformed, ClassMalformed},
}

// Class maps an error from writ's record path to its vector error class,
// or "" for nil. An error outside the vocabulary maps to "unclassified".
func Class(err error) string {
	if err == nil {
		return ""
	}
	for _, c := range classes {
		if errors.Is(err, c.err) {
			return c.class
		}
	}
	return "unclassified"
}

// classError is an error that carries its class directly, for outcomes
// decided here rather than by a writ sentinel.
type classError struct{ class, msg string }

func (e *classError) Error() string { return e.class + ": " + e.msg }

// ClassOf is Class, also understanding the outcomes Check decides itself
// (wrong-kind, unknown-key, threshold).
func ClassOf(err error) string {
	var ce *classError
	if errors.As(err, &ce) {
		return ce.class
	}
	return Class(err)
}

// Check runs a vector through writ's own record path: the trusted keys
// through sign.NewPublicKey; a bare record through schemas.Decode; an
// envelope through sign.ParseEnvelope, Envelope.Verify with the trusted
// keys, the threshold count (distinct verified keys) and schemas.Decode of
// the payload; keys inside root and delegation records through
// sign.NewPublicKey. It returns the decoded record, or an error whose
// ClassOf is the vector's error class.
func Check(v Vector) (schemas.Record, error) {
	input, err := hex.DecodeString(v.Input)
	if err != nil {
		return nil, fmt.Errorf("vector %s: input is not hex: %w", v.Name, err)
	}
	trusted := map[string]sign.PublicKey{}
	for i, h := range v.TrustedKeys {
		raw, err := hex.DecodeString(h)
		if err != nil {
			return nil, fmt.Errorf("vector %s: trusted key %d is not hex: %w", v.Name, i, err)
		}
		k, err := sign.NewPublicKey(raw)
		if err != nil {
			return nil, fmt.Errorf("trusted key %d: %w", i, err)
		}
		trusted[k.ID()] = k
	}
	kind := schemas.Kind(v.Kind)
	if !v.Signed {
		rec, err := schemas.Decode(kind, input)
		if err != nil {
			return nil, err
		}
		if err := checkInnerKeys(rec); err != nil {
			return nil, err
		}
		return rec, nil
	}
	env, err := sign.ParseEnvelope(input)
	if err != nil {
		return nil, err
	}
	if env.Kind != kind {
		return nil, &classError{ClassWrongKind, fmt.Sprintf("signed as %s, expected %s", env.Kind, kind)}
	}
	verified, err := env.Verify(func(id string) (sign.PublicKey, bool) { k, ok := trusted[id]; return k, ok })
	if err != nil {
		return nil, err
	}
	if len(verified.Keys) == 0 {
		return nil, &classError{ClassUnknownKey, fmt.Sprintf("signed only by untrusted key ids %v", verified.Unknown)}
	}
	if len(verified.Keys) < v.Threshold {
		return nil, &classError{ClassThreshold, fmt.Sprintf("%d distinct trusted keys signed, threshold %d", len(verified.Keys), v.Threshold)}
	}
	rec, err := schemas.Decode(kind, env.Payload)
	if err != nil {
		return nil, err
	}
	if err := checkInnerKeys(rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// checkInnerKeys checks the public keys a record carries.
func checkInnerKeys(rec schemas.Record) error {
	switch r := rec.(type) {
	case *schemas.Root:
		for i, raw := range r.Keys {
			if _, err := sign.NewPublicKey(raw); err != nil {
				return fmt.Errorf("root.keys[%d]: %w", i, err)
			}
		}
	case *schemas.Delegation:
		if _, err := sign.NewPublicKey(r.Key); err != nil {
			return fmt.Errorf("delegation.key: %w", err)
		}
	}
	return nil
}
