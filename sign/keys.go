package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"

	"filippo.io/edwards25519"
)

// MaxPublicKeyFile is the largest public key file read, in bytes. A PEM
// Ed25519 key is 113 bytes; the bound keeps a hostile path (a device, a
// huge file) from being read into memory.
const MaxPublicKeyFile = 16 << 10

// ErrInvalidKey is wrapped by every error for key material that is not an
// acceptable Ed25519 key: wrong length, not a point, small order, a torsion
// component, not Ed25519, or not PEM PKIX.
var ErrInvalidKey = errors.New("invalid key")

// PublicKey is a checked Ed25519 public key. The zero value is not a key;
// obtain one from NewPublicKey, ParsePublicKeyPEM or LoadPublicKey.
type PublicKey struct {
	raw [32]byte
	id  string
}

// NewPublicKey checks raw as an Ed25519 public key (RFC 8032 §5.1.5): it
// must be exactly 32 bytes, the canonical encoding of a point on the curve,
// not of small order (its multiple by the cofactor 8 is not the identity),
// and in the prime-order subgroup (its multiple by the group order ℓ is
// the identity), so that it has no torsion component: one secret has
// exactly one acceptable public key. It returns an error wrapping
// ErrInvalidKey otherwise.
func NewPublicKey(raw []byte) (PublicKey, error) {
	if len(raw) != ed25519.PublicKeySize {
		return PublicKey{}, fmt.Errorf("%w: Ed25519 public key is %d bytes, want 32", ErrInvalidKey, len(raw))
	}
	p, err := new(edwards25519.Point).SetBytes(raw)
	if err != nil {
		return PublicKey{}, fmt.Errorf("%w: not a point on Ed25519", ErrInvalidKey)
	}
	if !bytes.Equal(p.Bytes(), raw) {
		return PublicKey{}, fmt.Errorf("%w: non-canonical point encoding", ErrInvalidKey)
	}
	if new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1 {
		return PublicKey{}, fmt.Errorf("%w: point of small order", ErrInvalidKey)
	}
	if !inPrimeOrderSubgroup(p) {
		// A + T with T of order 2, 4 or 8: the same secret would sign as
		// up to 8 distinct keys (and key ids), so one holder could count
		// as several toward a threshold.
		return PublicKey{}, fmt.Errorf("%w: point has a torsion component (not in the prime-order subgroup)", ErrInvalidKey)
	}
	k := PublicKey{}
	copy(k.raw[:], raw)
	der, err := x509.MarshalPKIXPublicKey(ed25519.PublicKey(k.raw[:]))
	if err != nil {
		return PublicKey{}, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	sum := sha256.Sum256(der)
	k.id = hex.EncodeToString(sum[:])
	return k, nil
}

// ID returns the key id: lowercase hex SHA-256 of the PKIX DER encoding,
// 64 characters.
func (k PublicKey) ID() string { return k.id }

// IDBytes returns the key id as 32 raw bytes (the COSE kid).
func (k PublicKey) IDBytes() []byte {
	b, _ := hex.DecodeString(k.id)
	return b
}

// Raw returns a copy of the 32-byte public key.
func (k PublicKey) Raw() []byte { return bytes.Clone(k.raw[:]) }

// Ed25519 returns the key as a crypto/ed25519 public key (a copy).
func (k PublicKey) Ed25519() ed25519.PublicKey { return ed25519.PublicKey(k.Raw()) }

// Equal reports whether k and o are the same key.
func (k PublicKey) Equal(o PublicKey) bool { return k.raw == o.raw && k.id != "" }

// IsZero reports whether k is the zero value (no key).
func (k PublicKey) IsZero() bool { return k.id == "" }

// PEM returns the key as PEM PKIX ("PUBLIC KEY").
func (k PublicKey) PEM() []byte {
	der, err := x509.MarshalPKIXPublicKey(k.Ed25519())
	if err != nil {
		panic(err) // an Ed25519 key always marshals
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// ParsePublicKeyPEM reads exactly one PEM "PUBLIC KEY" block holding a PKIX
// Ed25519 key, with nothing but whitespace around it, and checks it as
// NewPublicKey does. Errors wrap ErrInvalidKey, and also ErrPrivateKeyFile
// for a private key file (age-encrypted or PKCS#8) given instead.
func ParsePublicKeyPEM(data []byte) (PublicKey, error) {
	block, rest := pem.Decode(data)
	if block == nil {
		return PublicKey{}, fmt.Errorf("%w: no PEM block: this is %s", ErrInvalidKey, Describe(data[:min(len(data), 64)]))
	}
	if len(trimASCII(rest)) != 0 {
		return PublicKey{}, fmt.Errorf("%w: data after the PEM block", ErrInvalidKey)
	}
	if block.Type == "AGE ENCRYPTED FILE" || block.Type == "PRIVATE KEY" {
		return PublicKey{}, fmt.Errorf("%w: %w: give the public key file (writ key generate writes PREFIX.pub beside PREFIX.key)", ErrInvalidKey, ErrPrivateKeyFile)
	}
	if block.Type != "PUBLIC KEY" || len(block.Headers) != 0 {
		return PublicKey{}, fmt.Errorf("%w: PEM block is %q, want \"PUBLIC KEY\" without headers", ErrInvalidKey, block.Type)
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return PublicKey{}, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	ed, ok := pub.(ed25519.PublicKey)
	if !ok {
		return PublicKey{}, fmt.Errorf("%w: key is %T, writ accepts Ed25519 only", ErrInvalidKey, pub)
	}
	k, err := NewPublicKey(ed)
	if err != nil {
		return PublicKey{}, err
	}
	// Canonical only: the text (up to surrounding whitespace and CRLF line
	// ends) must be exactly the PEM writ writes, so that one key has one
	// file form; base64 with stray padding bits, or DER with extra
	// encodings, is refused.
	text := trimASCII(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")))
	if !bytes.Equal(text, trimASCII(k.PEM())) {
		return PublicKey{}, fmt.Errorf("%w: non-canonical PEM or PKIX encoding", ErrInvalidKey)
	}
	return k, nil
}

// trimASCII trims ASCII whitespace only (space, tab, CR, LF), not the
// Unicode spaces bytes.TrimSpace also removes.
func trimASCII(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// LoadPublicKey reads a PEM PKIX Ed25519 public key file (at most
// MaxPublicKeyFile bytes). Errors name the path; key errors wrap
// ErrInvalidKey (and ErrPrivateKeyFile for a private key file given
// instead), I/O errors wrap the os error.
func LoadPublicKey(path string) (PublicKey, error) {
	data, err := readBounded(path, MaxPublicKeyFile)
	if err != nil {
		return PublicKey{}, err
	}
	k, err := ParsePublicKeyPEM(data)
	if err != nil {
		return PublicKey{}, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// readBounded reads a whole file of at most limit bytes; a longer file is
// an error, found without reading more than limit+1 bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: file is larger than %d bytes", path, limit)
	}
	return data, nil
}

// orderMinusOne is ℓ − 1 (RFC 8032 §5.1: ℓ = 2^252 +
// 27742317777372353535851937790883648493), little-endian, a canonical
// scalar.
var orderMinusOne = func() *edwards25519.Scalar {
	b := [32]byte{0xec, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14}
	b[31] = 0x10
	s, err := edwards25519.NewScalar().SetCanonicalBytes(b[:])
	if err != nil {
		panic(err)
	}
	return s
}()

// inPrimeOrderSubgroup reports whether [ℓ]p is the identity, computed as
// [ℓ−1]p + p (a scalar is reduced mod ℓ, so ℓ itself cannot be given).
// Public input: the variable-time multiplication is fine.
func inPrimeOrderSubgroup(p *edwards25519.Point) bool {
	q := new(edwards25519.Point).VarTimeDoubleScalarBaseMult(orderMinusOne, p, edwards25519.NewScalar())
	q.Add(q, p)
	return q.Equal(edwards25519.NewIdentityPoint()) == 1
}
