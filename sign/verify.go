package sign

import (
	"fmt"

	"github.com/veraison/go-cose"
)

// KeyLookup returns the trusted public key with the given key id (64
// lowercase hex), or false if the caller trusts no such key.
type KeyLookup func(keyID string) (PublicKey, bool)

// Verified is the outcome of Envelope.Verify: the distinct keys whose
// signatures verified, and the key ids the lookup did not know.
type Verified struct {
	Keys    []PublicKey // distinct keys, in signature order
	Unknown []string    // key ids of signatures that were not checked
}

// Has reports whether k is among the verified keys.
func (v Verified) Has(k PublicKey) bool {
	for _, x := range v.Keys {
		if x.Equal(k) {
			return true
		}
	}
	return false
}

// Verify checks every signature whose key id the lookup knows, over the
// protected header and payload bytes as received (RFC 9052 §4.4), with
// Ed25519: the algorithm comes from the trusted key, and the header's alg
// must be one that names Ed25519. Signatures by unknown key ids are listed
// in Unknown and count for nothing. If any signature by a known key fails,
// Verify returns an error wrapping ErrBadSignature naming the key id: a
// forged signature is never silently ignored. A lookup that returns a key
// whose id differs from the kid asked for is a programming error and
// fails as ErrBadSignature.
func (e *Envelope) Verify(lookup KeyLookup) (Verified, error) {
	var out Verified
	for i, si := range e.Signatures {
		key, ok := lookup(si.KeyID)
		if !ok {
			out.Unknown = append(out.Unknown, si.KeyID)
			continue
		}
		if key.ID() != si.KeyID {
			return Verified{}, fmt.Errorf("%w: key lookup for %s returned key %s", ErrBadSignature, si.KeyID, key.ID())
		}
		if i >= len(e.prechecked) || !e.prechecked[i].Equal(key) {
			if err := e.verifyOne(i, key); err != nil {
				return Verified{}, err
			}
		}
		if out.Has(key) {
			return Verified{}, fmt.Errorf("%w: %w: key %s", ErrMalformedEnvelope, ErrDuplicateSigner, key.ID())
		}
		out.Keys = append(out.Keys, key)
	}
	return out, nil
}

// Verify checks an Ed25519 signature (RFC 8032 §5.1.7) of msg by k, with
// the verdict of crypto/ed25519.Verify (the call sigstore's
// ED25519Verifier makes), computed by curve25519-voi with a cached
// precomputation of k (see verifyEd25519). A zero key, or a signature that
// does not verify, returns an error wrapping ErrBadSignature naming the
// key id.
func (k PublicKey) Verify(msg, sig []byte) error {
	if k.IsZero() {
		return fmt.Errorf("%w: no key", ErrBadSignature)
	}
	if !verifyEd25519(&k.raw, msg, sig) {
		return fmt.Errorf("%w: key %s", ErrBadSignature, k.ID())
	}
	return nil
}

// verifyOne checks signature i under key.
func (e *Envelope) verifyOne(i int, key PublicKey) error {
	v, err := newCoseVerifier(key, e.Signatures[i].Alg)
	if err != nil {
		return err
	}
	if e.sign1 != nil {
		err = e.sign1.Verify(nil, v)
	} else {
		err = e.multi.Signatures[i].Verify(v, e.multi.Headers.RawProtected, e.multi.Payload, nil)
	}
	if err != nil {
		return fmt.Errorf("%w: %s record signed by key %s", ErrBadSignature, e.Kind, e.Signatures[i].KeyID)
	}
	return nil
}

// Precheck verifies, ahead of time and on any goroutine, each signature
// whose key id lookup knows, and remembers the key it verified under. A
// later Verify skips the Ed25519 computation for a signature when its
// trusted key is that same key (the bytes received cannot change, and a
// key id names one key), so only trust, not cryptography, is decided
// there. Precheck must not run concurrently with Verify on the same
// Envelope.
func (e *Envelope) Precheck(lookup KeyLookup) {
	e.prechecked = make([]PublicKey, len(e.Signatures))
	for i, si := range e.Signatures {
		if key, ok := lookup(si.KeyID); ok && key.ID() == si.KeyID && e.verifyOne(i, key) == nil {
			e.prechecked[i] = key
		}
	}
}

// coseVerifier adapts a trusted Ed25519 key to go-cose's Verifier. Its
// Algorithm is the header's alg only after checkAlgKid has accepted that
// alg as a name for Ed25519; the verification itself is always Ed25519.
type coseVerifier struct {
	alg cose.Algorithm
	key PublicKey
}

func newCoseVerifier(k PublicKey, alg cose.Algorithm) (coseVerifier, error) {
	if alg != AlgEdDSA && alg != AlgEd25519 {
		return coseVerifier{}, fmt.Errorf("%w: alg %d", ErrAlgorithm, alg)
	}
	return coseVerifier{alg: alg, key: k}, nil
}

func (c coseVerifier) Algorithm() cose.Algorithm        { return c.alg }
func (c coseVerifier) Verify(content, sig []byte) error { return c.key.Verify(content, sig) }
