package ledger

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Errors for checkpoints.
var (
	// ErrMalformedCheckpoint: the checkpoint text is not a well-formed,
	// canonical C2SP checkpoint.
	ErrMalformedCheckpoint = errors.New("malformed checkpoint")
	// ErrCheckpointSignature: the checkpoint is not signed by the expected
	// key, or its signature does not verify.
	ErrCheckpointSignature = errors.New("checkpoint signature does not verify")
)

// MaxCheckpointSize bounds a signed checkpoint, in bytes: the body is under
// 200 bytes and each signature line under 150.
const MaxCheckpointSize = 16 << 10

// Checkpoint is the body of a C2SP tlog-checkpoint.
type Checkpoint struct {
	Origin string    // the log's origin, also the note key name
	Size   int64     // number of entries
	Hash   tlog.Hash // RFC 6962 root hash of the first Size entries
}

// Body returns the checkpoint body: origin, size and base64 root hash, each
// followed by a newline.
func (c Checkpoint) Body() string {
	return fmt.Sprintf("%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Hash[:]))
}

// ParseCheckpoint parses a checkpoint body strictly: exactly three lines,
// a decimal size without sign or leading zeros, a 32-byte root hash in
// standard padded base64, and no extension lines. The error wraps
// ErrMalformedCheckpoint.
func ParseCheckpoint(body string) (Checkpoint, error) {
	lines := strings.SplitAfter(body, "\n")
	if len(lines) != 4 || lines[3] != "" {
		return Checkpoint{}, fmt.Errorf("%w: want exactly 3 newline-terminated lines", ErrMalformedCheckpoint)
	}
	var c Checkpoint
	c.Origin = strings.TrimSuffix(lines[0], "\n")
	size, err := strconv.ParseInt(strings.TrimSuffix(lines[1], "\n"), 10, 64)
	if err != nil || size < 0 {
		return Checkpoint{}, fmt.Errorf("%w: size line %q", ErrMalformedCheckpoint, lines[1])
	}
	c.Size = size
	h, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(lines[2], "\n"))
	if err != nil || len(h) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("%w: root hash line %q", ErrMalformedCheckpoint, lines[2])
	}
	copy(c.Hash[:], h)
	if c.Origin == "" || c.Body() != body {
		return Checkpoint{}, fmt.Errorf("%w: not in canonical form", ErrMalformedCheckpoint)
	}
	return c, nil
}

// ValidOrigin reports whether s can be a log origin and note key name:
// 1 to 128 printable ASCII characters, none of them space or '+'.
func ValidOrigin(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r > '~' || r == '+' {
			return false
		}
	}
	return true
}

// VerifierKey returns the signed-note verifier key for origin and k:
// "<origin>+<8 hex key hash>+<base64 of 0x01 || key>" (c2sp.org/signed-note).
func VerifierKey(origin string, k sign.PublicKey) (string, error) {
	return note.NewEd25519VerifierKey(origin, k.Ed25519())
}

// noteSigner signs notes with a writ private key (through its sigstore
// signer), under the key name origin.
type noteSigner struct {
	name string
	hash uint32
	key  *sign.PrivateKey
}

func newNoteSigner(origin string, k *sign.PrivateKey) (*noteSigner, string, error) {
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

// OpenCheckpoint verifies a signed checkpoint against the verifier key
// vkey and parses its body. The note's text must be a checkpoint whose
// origin is vkey's key name. Errors wrap ErrCheckpointSignature or
// ErrMalformedCheckpoint.
func OpenCheckpoint(signed []byte, vkey string) (Checkpoint, error) {
	if len(signed) > MaxCheckpointSize {
		return Checkpoint{}, fmt.Errorf("%w: %d bytes, limit %d", ErrMalformedCheckpoint, len(signed), MaxCheckpointSize)
	}
	v, err := NewVerifier(vkey)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: verifier key: %w", ErrCheckpointSignature, err)
	}
	n, err := note.Open(signed, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %v", ErrCheckpointSignature, err)
	}
	c, err := ParseCheckpoint(n.Text)
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Origin != v.Name() {
		return Checkpoint{}, fmt.Errorf("%w: origin %q is not the key name %q", ErrMalformedCheckpoint, c.Origin, v.Name())
	}
	return c, nil
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
// key ("<name>+<8 hex>+<base64 of 0x01 || 32-byte key>"), after checking
// the key hash as note.NewVerifier does.
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
