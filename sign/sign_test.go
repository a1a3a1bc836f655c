package sign_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/edwards25519"

	"filippo.io/age"
	"github.com/veraison/go-cose"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

var payload = []byte{0xa1, 0x61, 'v', 0x01} // any bytes; envelopes do not parse payloads

func lookup(keys ...*sign.PrivateKey) sign.KeyLookup {
	return func(id string) (sign.PublicKey, bool) {
		for _, k := range keys {
			if k.Public().ID() == id {
				return k.Public(), true
			}
		}
		return sign.PublicKey{}, false
	}
}

func TestSign1RoundTrip(t *testing.T) {
	k := testkit.Key(t, 1)
	env, err := sign.Sign(schemas.KindPin, payload, k)
	if err != nil {
		t.Fatal(err)
	}
	if env[0] != 0xd2 {
		t.Fatalf("one signer should give a tagged COSE_Sign1, starts %x", env[0])
	}
	e, err := sign.ParseEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != schemas.KindPin || !bytes.Equal(e.Payload, payload) || e.Signatures[0].KeyID != k.Public().ID() {
		t.Fatalf("parsed %+v", e)
	}
	v, err := e.Verify(lookup(k))
	if err != nil || len(v.Keys) != 1 || !v.Keys[0].Equal(k.Public()) {
		t.Fatalf("Verify = %+v, %v", v, err)
	}
	// An unknown signer verifies nothing and is listed.
	v, err = e.Verify(lookup(testkit.Key(t, 2)))
	if err != nil || len(v.Keys) != 0 || len(v.Unknown) != 1 {
		t.Fatalf("Verify with another key = %+v, %v", v, err)
	}
}

func TestThresholdEnvelope(t *testing.T) {
	a, b, c := testkit.Key(t, 1), testkit.Key(t, 2), testkit.Key(t, 3)
	env, err := sign.Sign(schemas.KindRoot, payload, c, a, b)
	if err != nil {
		t.Fatal(err)
	}
	e, err := sign.ParseEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Signatures) != 3 {
		t.Fatalf("%d signatures", len(e.Signatures))
	}
	for i := 1; i < 3; i++ {
		if e.Signatures[i-1].KeyID >= e.Signatures[i].KeyID {
			t.Fatal("signatures are not sorted by key id")
		}
	}
	v, err := e.Verify(lookup(a, b))
	if err != nil || len(v.Keys) != 2 || len(v.Unknown) != 1 {
		t.Fatalf("Verify = %+v, %v", v, err)
	}
	if _, err := sign.Sign(schemas.KindRoot, payload, a, a); err == nil {
		t.Fatal("signing twice with one key was accepted")
	}
}

// TestKindIsAuthenticated: the record kind is in the signed protected
// header. A pin's signature grafted onto the same payload under a root
// header does not verify, and an unknown kind does not parse.
func TestKindIsAuthenticated(t *testing.T) {
	k := testkit.Key(t, 1)
	pin, _ := sign.Sign(schemas.KindPin, payload, k)
	root, _ := sign.Sign(schemas.KindRoot, payload, k)
	spliced := bytes.Replace(root, sigOf(t, root), sigOf(t, pin), 1)
	e, err := sign.ParseEnvelope(spliced)
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != schemas.KindRoot {
		t.Fatalf("kind %s", e.Kind)
	}
	if _, err := e.Verify(lookup(k)); !errors.Is(err, sign.ErrBadSignature) {
		t.Fatalf("a pin signature verified on a root header: %v", err)
	}
	unknown := bytes.Replace(pin, []byte("vnd.writ.pin+"), []byte("vnd.writ.pun+"), 1)
	if _, err := sign.ParseEnvelope(unknown); !errors.Is(err, sign.ErrMalformedEnvelope) {
		t.Fatalf("unknown kind: %v", err)
	}
}

// sigOf returns the 64-byte signature at the end of a COSE_Sign1.
func sigOf(t *testing.T, env []byte) []byte {
	t.Helper()
	return env[len(env)-64:]
}

func TestParseEnvelopeRefuses(t *testing.T) {
	k := testkit.Key(t, 1)
	good, _ := sign.Sign(schemas.KindPin, payload, k)
	withHeader := func(h cose.ProtectedHeader, unprotected cose.UnprotectedHeader) []byte {
		m := cose.NewSign1Message()
		m.Headers.Protected = h
		m.Headers.Unprotected = unprotected
		m.Payload = payload
		m.Signature = bytes.Repeat([]byte{1}, 64)
		b, err := m.MarshalCBOR()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	kid := k.Public().IDBytes()
	ct := schemas.KindPin.ContentType()
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"untagged", good[1:], sign.ErrMalformedEnvelope},
		{"trailing byte", append(bytes.Clone(good), 0), sign.ErrMalformedEnvelope},
		{"alg ES256", withHeader(cose.ProtectedHeader{1: cose.AlgorithmES256, 3: ct, 4: kid}, nil), sign.ErrAlgorithm},
		{"no alg", withHeader(cose.ProtectedHeader{3: ct, 4: kid}, nil), sign.ErrAlgorithm},
		{"short kid", withHeader(cose.ProtectedHeader{1: cose.AlgorithmEdDSA, 3: ct, 4: kid[:16]}, nil), sign.ErrMalformedEnvelope},
		{"unknown content type", withHeader(cose.ProtectedHeader{1: cose.AlgorithmEdDSA, 3: "application/cbor", 4: kid}, nil), sign.ErrMalformedEnvelope},
		{"extra protected label", withHeader(cose.ProtectedHeader{1: cose.AlgorithmEdDSA, 3: ct, 4: kid, int64(99): "x"}, nil), sign.ErrMalformedEnvelope},
		{"unprotected header", withHeader(cose.ProtectedHeader{1: cose.AlgorithmEdDSA, 3: ct, 4: kid}, cose.UnprotectedHeader{4: kid}), sign.ErrMalformedEnvelope},
		{"empty", nil, sign.ErrMalformedEnvelope},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := sign.ParseEnvelope(tc.in)
			if !errors.Is(err, tc.want) || e != nil {
				t.Fatalf("ParseEnvelope = %v, %v; want nil and %v", e, err, tc.want)
			}
		})
	}
}

// TestAlgEd25519Accepted: alg -19 (RFC 9864) names Ed25519 and verifies
// with the trusted Ed25519 key.
func TestAlgEd25519Accepted(t *testing.T) {
	k := testkit.Key(t, 1)
	m := cose.NewSign1Message()
	m.Headers.Protected = cose.ProtectedHeader{cose.HeaderLabelAlgorithm: sign.AlgEd25519, cose.HeaderLabelContentType: schemas.KindPin.ContentType(), cose.HeaderLabelKeyID: k.Public().IDBytes()}
	m.Payload = payload
	if err := m.Sign(rand.Reader, nil, alg19{k}); err != nil {
		t.Fatal(err)
	}
	b, _ := m.MarshalCBOR()
	e, err := sign.ParseEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := e.Verify(lookup(k)); err != nil || len(v.Keys) != 1 {
		t.Fatalf("Verify = %+v, %v", v, err)
	}
}

type alg19 struct{ k *sign.PrivateKey }

func (s alg19) Algorithm() cose.Algorithm { return sign.AlgEd25519 }
func (s alg19) Sign(_ io.Reader, c []byte) ([]byte, error) {
	return s.k.SignMessage(c)
}

func TestPublicKeyChecks(t *testing.T) {
	// The identity point (0, 1) is of small order: y = 1, encoded little-endian.
	identity := make([]byte, 32)
	identity[0] = 1
	// A point of order 8 (RFC 8032 / Wycheproof small-order list).
	order8, _ := hex.DecodeString("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
	// y = p (non-canonical encoding of y = 0).
	nonCanonical, _ := hex.DecodeString("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
	tests := []struct {
		name string
		raw  []byte
	}{
		{"31 bytes", make([]byte, 31)},
		{"33 bytes", make([]byte, 33)},
		{"identity", identity},
		{"order 8", order8},
		{"non-canonical", nonCanonical},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := sign.NewPublicKey(tc.raw)
			if !errors.Is(err, sign.ErrInvalidKey) || !k.IsZero() {
				t.Fatalf("NewPublicKey = %v, %v; want ErrInvalidKey", k, err)
			}
		})
	}
	good := testkit.Key(t, 9).Public()
	// A + T for T of order 2, 4 and 8: canonical points, not of small
	// order, yet outside the prime-order subgroup; the secret of A would
	// sign as each of them.
	a, err := new(edwards25519.Point).SetBytes(good.Raw())
	if err != nil {
		t.Fatal(err)
	}
	t8, err := new(edwards25519.Point).SetBytes(order8)
	if err != nil {
		t.Fatal(err)
	}
	torsion := []*edwards25519.Point{t8, new(edwards25519.Point).Add(t8, t8)}
	torsion = append(torsion, new(edwards25519.Point).Add(torsion[1], torsion[1]))
	for i, tp := range torsion {
		raw := new(edwards25519.Point).Add(a, tp).Bytes()
		k, err := sign.NewPublicKey(raw)
		if !errors.Is(err, sign.ErrInvalidKey) || !strings.Contains(err.Error(), "torsion component") || !k.IsZero() {
			t.Errorf("A + T (T of order %d) = %v, %v; want ErrInvalidKey for a torsion component", 8>>i, k, err)
		}
	}
	k, err := sign.ParsePublicKeyPEM(good.PEM())
	if err != nil || !k.Equal(good) {
		t.Fatalf("PEM round trip: %v", err)
	}
}

// TestKeyFiles: the private key file is age-encrypted with mode 0600, no
// file written contains the raw seed in any common encoding, and the file
// is refused when its mode is too open or the passphrase is wrong.
func TestKeyFiles(t *testing.T) {
	dir := t.TempDir()
	seed := bytes.Repeat([]byte{0x5e}, 32)
	prefix := filepath.Join(dir, "k")
	k, err := sign.GenerateKeyFiles(prefix, []age.Recipient{scrypt(t, "pw")}, bytes.NewReader(seed))
	if err != nil {
		t.Fatal(err)
	}
	if want := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey); !bytes.Equal(k.Public().Raw(), want) {
		t.Fatal("the key was not generated from the given randomness")
	}
	fi, _ := os.Stat(prefix + ".key")
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v", fi.Mode().Perm())
	}
	needles := [][]byte{seed, []byte(hex.EncodeToString(seed)), []byte(base64.StdEncoding.EncodeToString(seed)),
		[]byte(base64.StdEncoding.EncodeToString(seed)[:20])}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := os.ReadFile(p)
		for _, n := range needles {
			if bytes.Contains(data, n) {
				t.Errorf("%s contains the raw seed", p)
			}
		}
		return nil
	})
	loaded, err := sign.LoadPrivateKey(prefix+".key", identity(t, "pw"))
	if err != nil || !loaded.Public().Equal(k.Public()) {
		t.Fatalf("LoadPrivateKey = %v", err)
	}
	if _, err := sign.LoadPrivateKey(prefix+".key", identity(t, "wrong")); !errors.Is(err, sign.ErrWrongPassphrase) {
		t.Fatalf("wrong passphrase: %v", err)
	}
	os.Chmod(prefix+".key", 0o640)
	if _, err := sign.LoadPrivateKey(prefix+".key", identity(t, "pw")); !errors.Is(err, sign.ErrKeyFilePermissions) {
		t.Fatalf("mode 0640: %v", err)
	}
	if _, err := sign.GenerateKeyFiles(prefix, []age.Recipient{scrypt(t, "pw")}, rand.Reader); !errors.Is(err, sign.ErrExists) {
		t.Fatalf("overwrite: %v", err)
	}
}

func scrypt(t *testing.T, pass string) age.Recipient {
	r, err := sign.ScryptRecipient([]byte(pass), sign.MinWorkFactor)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func identity(t *testing.T, pass string) age.Identity {
	id, err := sign.ScryptIdentity([]byte(pass))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestX25519KeyFiles: a key file encrypted to an age X25519 recipient
// opens with the matching identity file only.
func TestX25519KeyFiles(t *testing.T) {
	dir := t.TempDir()
	id, _ := age.GenerateX25519Identity()
	other, _ := age.GenerateX25519Identity()
	to, err := sign.ParseRecipients([]string{id.Recipient().String()})
	if err != nil {
		t.Fatal(err)
	}
	k, err := sign.GenerateKeyFiles(filepath.Join(dir, "k"), to, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	idFile := filepath.Join(dir, "identity.txt")
	os.WriteFile(idFile, []byte("# test identity\n"+id.String()+"\n"), 0o600)
	ids, err := sign.LoadIdentities(idFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := sign.LoadPrivateKey(filepath.Join(dir, "k.key"), ids...); err != nil || !got.Public().Equal(k.Public()) {
		t.Fatalf("LoadPrivateKey with the identity = %v", err)
	}
	if _, err := sign.LoadPrivateKey(filepath.Join(dir, "k.key"), other); !errors.Is(err, sign.ErrNoIdentity) {
		t.Fatalf("another identity: %v", err)
	}
	if _, err := sign.LoadPrivateKey(filepath.Join(dir, "k.key"), identity(t, "pw")); !errors.Is(err, sign.ErrNoIdentity) {
		t.Fatalf("a passphrase for an X25519 file: %v", err)
	}
	os.Chmod(idFile, 0o644)
	if _, err := sign.LoadIdentities(idFile); !errors.Is(err, sign.ErrKeyFilePermissions) {
		t.Fatalf("world-readable identity file: %v", err)
	}
	if _, err := sign.ParseRecipients([]string{"age1notarecipient"}); err == nil {
		t.Fatal("a malformed recipient was accepted")
	}
}

// TestEnvelopeNotMalleable: nobody without a key can turn one signed
// envelope into another that still parses: reordered signatures, a padded
// junk entry, and signatures of the wrong length are refused.
func TestEnvelopeNotMalleable(t *testing.T) {
	a, b := testkit.Key(t, 1), testkit.Key(t, 2)
	env, _ := sign.Sign(schemas.KindRoot, payload, a, b)
	edit := func(f func(m *cose.SignMessage)) []byte {
		m := new(cose.SignMessage)
		if err := m.UnmarshalCBOR(env); err != nil {
			t.Fatal(err)
		}
		f(m)
		out, err := m.MarshalCBOR()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	junk := cose.NewSignature()
	junk.Headers.Protected = cose.ProtectedHeader{cose.HeaderLabelAlgorithm: cose.AlgorithmEdDSA, cose.HeaderLabelKeyID: bytes.Repeat([]byte{0xff}, 32)}
	junk.Signature = []byte{0}
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"reordered", edit(func(m *cose.SignMessage) { m.Signatures[0], m.Signatures[1] = m.Signatures[1], m.Signatures[0] }), sign.ErrMalformedEnvelope},
		{"junk entry appended", edit(func(m *cose.SignMessage) { m.Signatures = append(m.Signatures, junk) }), sign.ErrMalformedEnvelope},
		{"63-byte signature", edit(func(m *cose.SignMessage) { m.Signatures[1].Signature = m.Signatures[1].Signature[:63] }), sign.ErrMalformedEnvelope},
	}
	for _, tc := range tests {
		if e, err := sign.ParseEnvelope(tc.in); !errors.Is(err, tc.want) || e != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
