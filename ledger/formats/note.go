package formats

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/note"
)

// VerifierKey returns the signed-note verifier key for origin and k:
// "<origin>+<8 hex key hash>+<base64 of 0x01 || key>" (c2sp.org/signed-note).
func VerifierKey(origin string, k sign.PublicKey) (string, error) {
	return note.NewEd25519VerifierKey(origin, k.Ed25519())
}

// NewVerifier parses a signed-note verifier key (c2sp.org/signed-note:
// "<name>+<8 hex key hash>+<base64 of 0x01 || 32-byte key>") whose Ed25519
// key passes sign.NewPublicKey: canonical, not of small order, in the
// prime-order subgroup. note.NewVerifier alone accepts any 32 bytes, and a
// small-order key verifies forged signatures. Errors wrap
// sign.ErrInvalidKey for a key that fails those checks.
func NewVerifier(vkey string) (note.Verifier, error) {
	if _, err := VerifierPublicKey(vkey); err != nil {
		return nil, err
	}
	return note.NewVerifier(vkey)
}

// VerifierPublicKey returns the Ed25519 key inside a signed-note verifier
// key ("<name>+<8 hex>+<base64 of 0x01 || 32-byte key>",
// c2sp.org/signed-note), after checking the key hash as note.NewVerifier
// does. Errors wrap sign.ErrInvalidKey for a key sign.NewPublicKey
// refuses.
func VerifierPublicKey(vkey string) (sign.PublicKey, error) {
	if _, err := note.NewVerifier(vkey); err != nil {
		return sign.PublicKey{}, err
	}
	// The name cannot contain '+', the hash is hex; the base64 key can.
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		return sign.PublicKey{}, fmt.Errorf("verifier key %q is not <name>+<hash>+<key>", vkey)
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) != 33 || raw[0] != 1 {
		return sign.PublicKey{}, fmt.Errorf("verifier key %q is not an Ed25519 signed-note key", vkey)
	}
	k, err := sign.NewPublicKey(raw[1:])
	if err != nil {
		return sign.PublicKey{}, fmt.Errorf("verifier key %s: %w", vkey, err)
	}
	return k, nil
}

// noteSigner signs notes with a writ private key (through its sigstore
// signer), under the key name origin.
type noteSigner struct {
	name string
	hash uint32
	key  *sign.PrivateKey
}

// NewNoteSigner returns a note.Signer that makes Ed25519 signed-note
// signatures (c2sp.org/signed-note: key hash, then the 64-byte signature
// over the note text) with k under the key name origin, and the verifier
// key that checks them (VerifierKey). A checkpoint signed with it opens
// with OpenCheckpoint. Errors come from note.NewEd25519VerifierKey and
// note.NewVerifier: an origin that is not a valid key name (ValidOrigin).
func NewNoteSigner(origin string, k *sign.PrivateKey) (note.Signer, string, error) {
	vkey, err := VerifierKey(origin, k.Public())
	if err != nil {
		return nil, "", err
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, "", err
	}
	return &noteSigner{name: origin, hash: v.KeyHash(), key: k}, vkey, nil
}

func (s *noteSigner) Name() string                    { return s.name }
func (s *noteSigner) KeyHash() uint32                 { return s.hash }
func (s *noteSigner) Sign(msg []byte) ([]byte, error) { return s.key.SignMessage(msg) }
