package sign

import (
	"crypto/ed25519"
	"sync"

	voi "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"
)

// Ed25519 verification is the floor of every append, audit and admission,
// so writ verifies with github.com/oasisprotocol/curve25519-voi, whose
// precomputed ("expanded") public keys make one verification about 0.7 of
// crypto/ed25519's cost, under its VerifyOptionsStdLib preset: the
// verdicts of crypto/ed25519.Verify, bit for bit. Those are RFC 8032
// §5.1.7 with the cofactorless equation: S must be below ℓ, R must be
// the canonical encoding of exactly [S]B − [k]A (compared as bytes, so a
// non-canonical R, or an R off by a point of small order, fails), a
// small-order R or A is allowed. writ's keys are also canonical and
// torsion-free (NewPublicKey), so the A-side leniencies of that preset
// are never reached. TestVerifierMatchesStdlib and FuzzVerifierMatchesStdlib
// hold the two verifiers to the same verdict on the RFC 8032 and
// Wycheproof vectors, on signatures whose R or S is non-canonical or whose
// R has a small-order component, and on random corruptions.
//
// Batch verification is not used: a batch checks the cofactored equation
// ([8]([S]B − R − [k]A) = 0), which accepts an R carrying a small-order
// component that the single verification refuses; making the verdicts
// equal needs a torsion check of each R ([ℓ]R = 0), and that check costs
// more than the batch saves (bench/verify.sh prints both).
var stdlibSemantics = &voi.Options{Verify: voi.VerifyOptionsStdLib}

// maxExpandedKeys bounds the cache of expanded public keys (each a few
// KiB). Keys past the bound are verified without a cached expansion: the
// same verdict, a little slower.
const maxExpandedKeys = 1024

var expandedKeys struct {
	sync.RWMutex
	m map[[32]byte]*voi.ExpandedPublicKey
}

// expanded returns the cached expansion of raw, making it on first use; nil
// if the cache is full (or raw does not expand, which a checked key
// always does).
func expanded(raw *[32]byte) *voi.ExpandedPublicKey {
	expandedKeys.RLock()
	ek := expandedKeys.m[*raw]
	expandedKeys.RUnlock()
	if ek != nil {
		return ek
	}
	ek, err := voi.NewExpandedPublicKey(voi.PublicKey(raw[:]))
	if err != nil {
		return nil
	}
	expandedKeys.Lock()
	defer expandedKeys.Unlock()
	if expandedKeys.m == nil {
		expandedKeys.m = make(map[[32]byte]*voi.ExpandedPublicKey)
	}
	if prev := expandedKeys.m[*raw]; prev != nil {
		return prev
	}
	if len(expandedKeys.m) >= maxExpandedKeys {
		return ek
	}
	expandedKeys.m[*raw] = ek
	return ek
}

// verifyEd25519 reports whether sig is a valid Ed25519 signature of msg by
// the public key raw, with exactly crypto/ed25519.Verify's verdict.
func verifyEd25519(raw *[32]byte, msg, sig []byte) bool {
	if len(sig) != ed25519.SignatureSize {
		return false
	}
	if ek := expanded(raw); ek != nil {
		return voi.VerifyExpandedWithOptions(ek, msg, sig, stdlibSemantics)
	}
	return ed25519.Verify(raw[:], msg, sig)
}
