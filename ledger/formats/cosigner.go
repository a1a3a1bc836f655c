package formats

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/note"
)

// errCosignerKey: a witness (cosigner) verifier key that is not an
// Ed25519 cosignature/v1 vkey (c2sp.org/tlog-cosignature: signature type
// 0x04).
var errCosignerKey = errors.New("not a cosignature/v1 verifier key")

// CosignerKey returns the verifier key (vkey, c2sp.org/signed-note) of a
// cosignature/v1 cosigner (c2sp.org/tlog-cosignature, Ed25519): the text
// "<name>+<8 hex key id>+<base64 of 0x04 || 32-byte public key>", whose key
// id is the first 4 bytes of SHA-256(name || "\n" || 0x04 || key). It is
// what `writ witness key generate` prints and what a policy's witness line
// holds. The name must be a valid signed-note key name (ValidOrigin); the
// error names the rule it breaks otherwise.
func CosignerKey(name string, k sign.PublicKey) (string, error) {
	if !ValidOrigin(name) {
		return "", fmt.Errorf("%w: name %q is not a valid key name", errCosignerKey, name)
	}
	raw := append([]byte{0x04}, k.Raw()...)
	return fmt.Sprintf("%s+%08x+%s", name, cosignHash(name, k), base64.StdEncoding.EncodeToString(raw)), nil
}

// NewCosignerVerifier parses a cosignature/v1 verifier key (CosignerKey's
// form): the name must be a valid key name, the key id must match, the
// key must be 0x04 followed by 32 bytes that sign.NewPublicKey accepts
// (canonical, not of small order). The verifier checks that cosigner's
// timestamped cosignatures (CosigVerifier.Time, CosigVerifier.Open).
// Errors name the part of the key that is malformed, or wrap sign.ErrInvalidKey for a weak key.
func NewCosignerVerifier(vkey string) (*CosigVerifier, error) {
	name, rest, ok := strings.Cut(vkey, "+")
	if !ok || !ValidOrigin(name) {
		return nil, fmt.Errorf("%w: %q has no valid key name before '+'", errCosignerKey, vkey)
	}
	hash16, b64, ok := strings.Cut(rest, "+")
	if !ok || len(hash16) != 8 {
		return nil, fmt.Errorf("%w: %q is not <name>+<8 hex key id>+<base64 key>", errCosignerKey, vkey)
	}
	id, err := strconv.ParseUint(hash16, 16, 32)
	if err != nil || strings.ToLower(hash16) != hash16 {
		return nil, fmt.Errorf("%w: key id %q is not 8 lowercase hex digits", errCosignerKey, hash16)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(raw) != 33 {
		return nil, fmt.Errorf("%w: key of %q is not base64 of 33 bytes", errCosignerKey, name)
	}
	if raw[0] != 0x04 {
		return nil, fmt.Errorf("%w: key of %q has signature type 0x%02x, want 0x04 (Ed25519 cosignature/v1)", errCosignerKey, name, raw[0])
	}
	k, err := sign.NewPublicKey(raw[1:])
	if err != nil {
		return nil, fmt.Errorf("cosigner key %q: %w", name, err)
	}
	if uint32(id) != cosignHash(name, k) {
		return nil, fmt.Errorf("%w: key id %s of %q does not match its key", errCosignerKey, hash16, name)
	}
	return &CosigVerifier{name: name, key: k, hash: uint32(id)}, nil
}

// Name returns the key name the verifier checks signature lines under.
func (v *CosigVerifier) Name() string { return v.name }

// Key returns the Ed25519 public key the verifier checks with: two
// verifiers with equal keys are the same signer, whatever their names
// (a cosignature/v1 does not commit to the name).
func (v *CosigVerifier) Key() sign.PublicKey { return v.key }

// KeyID returns the 4-byte key id of the verifier's signature lines.
func (v *CosigVerifier) KeyID() uint32 { return v.hash }

var _ note.Signer = (*cosigner)(nil)
