package formats

import (
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/note"
)

// LogKey is a log's checkpoint verifier key (c2sp.org/signed-note,
// Ed25519, signature type 0x01), parsed and checked once: its text form,
// key name (the log's origin), key hash and public key, with the
// verifiers of its signed-note signatures and of its cosignature/v1
// lines (c2sp.org/tlog-cosignature). Trust is parsed into a LogKey where
// it enters (a flag, a file, a log's metadata) and passed as such; a
// *LogKey is never nil where a function takes one, unless its doc says.
type LogKey struct {
	text  string
	key   sign.PublicKey
	note  note.Verifier
	cosig *CosigVerifier
}

// ParseLogKey parses a signed-note verifier key
// ("<name>+<8 hex key hash>+<base64 of 0x01 || 32-byte key>") as
// NewVerifier does: the Ed25519 key must pass sign.NewPublicKey. Errors
// wrap sign.ErrInvalidKey for a key that fails those checks; others are
// note.NewVerifier's.
func ParseLogKey(vkey string) (*LogKey, error) {
	k, err := VerifierPublicKey(vkey)
	if err != nil {
		return nil, err
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, err
	}
	return &LogKey{text: vkey, key: k, note: v, cosig: &CosigVerifier{name: v.Name(), key: k, hash: cosignHash(v.Name(), k)}}, nil
}

// NewLogKey returns the LogKey of the log origin signing with k
// (VerifierKey's text). Errors: an origin that is not a valid key name.
func NewLogKey(origin string, k sign.PublicKey) (*LogKey, error) {
	vkey, err := VerifierKey(origin, k)
	if err != nil {
		return nil, err
	}
	return ParseLogKey(vkey)
}

// String returns the key's text form, "<name>+<hash>+<base64>", exactly
// as parsed; "" for a nil *LogKey (no key).
func (k *LogKey) String() string {
	if k == nil {
		return ""
	}
	return k.text
}

// Name returns the key name: the origin of the log whose checkpoints it
// signs.
func (k *LogKey) Name() string { return k.note.Name() }

// KeyHash returns the key hash of the key's signed-note signature lines.
func (k *LogKey) KeyHash() uint32 { return k.note.KeyHash() }

// PublicKey returns the Ed25519 public key.
func (k *LogKey) PublicKey() sign.PublicKey { return k.key }

// Verifier returns the note.Verifier of the key's signed-note signatures.
func (k *LogKey) Verifier() note.Verifier { return k.note }

// Cosig returns the verifier of the key's cosignature/v1 lines, the ones
// that carry a checkpoint's signed time (CheckpointTime).
func (k *LogKey) Cosig() *CosigVerifier { return k.cosig }
