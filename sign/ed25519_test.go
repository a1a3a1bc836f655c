package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha512"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"filippo.io/edwards25519"
)

// The third-party vectors live in testvectors/testdata/external (with
// their SOURCE and licence files); this test reads them from there.
var externalVectors = filepath.Join("..", "testvectors", "testdata", "external")

// verdictCase is one (key, message, signature) triple whose verdict
// writ's verifier must give exactly as crypto/ed25519.Verify does.
type verdictCase struct {
	name          string
	key, msg, sig []byte
}

// same fails t if verifyEd25519 and crypto/ed25519.Verify disagree on c,
// and returns the verdict.
func same(t *testing.T, c verdictCase) bool {
	t.Helper()
	want := len(c.key) == 32 && ed25519.Verify(c.key, c.msg, c.sig)
	if len(c.key) != 32 {
		return false
	}
	var raw [32]byte
	copy(raw[:], c.key)
	if got := verifyEd25519(&raw, c.msg, c.sig); got != want {
		t.Errorf("%s: writ's verifier says %v, crypto/ed25519 says %v (key %x sig %x)", c.name, got, want, c.key, c.sig)
	}
	return want
}

func mustUnhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// vectorCases loads every RFC 8032 §7.1 and Wycheproof Ed25519 case, keys
// writ would refuse included (the verifier must agree on them too).
func vectorCases(t *testing.T) []verdictCase {
	t.Helper()
	var out []verdictCase
	var rfc []struct{ Name, PublicKey, Message, Signature string }
	readVectors(t, filepath.Join(externalVectors, "rfc8032", "rfc8032_ed25519_section7.1.json"), &rfc)
	for _, v := range rfc {
		out = append(out, verdictCase{"rfc8032 " + v.Name, mustUnhex(t, v.PublicKey), mustUnhex(t, v.Message), mustUnhex(t, v.Signature)})
	}
	var wp struct {
		TestGroups []struct {
			PublicKeyPem string
			Tests        []struct {
				TcID     int `json:"tcId"`
				Msg, Sig string
			}
		}
	}
	readVectors(t, filepath.Join(externalVectors, "wycheproof", "wycheproof_ed25519_test.json"), &wp)
	for _, g := range wp.TestGroups {
		b, _ := pem.Decode([]byte(g.PublicKeyPem))
		if b == nil {
			t.Fatal("wycheproof: a key is not PEM")
		}
		k, err := x509.ParsePKIXPublicKey(b.Bytes)
		if err != nil {
			t.Fatalf("wycheproof key: %v", err)
		}
		for _, tc := range g.Tests {
			out = append(out, verdictCase{fmt.Sprintf("wycheproof tcId %d", tc.TcID), k.(ed25519.PublicKey), mustUnhex(t, tc.Msg), mustUnhex(t, tc.Sig)})
		}
	}
	if len(out) < 150 {
		t.Fatalf("only %d vector cases", len(out))
	}
	return out
}

func readVectors(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// smallOrder are the encodings of the eight points of small order
// (canonical), plus non-canonical encodings of small-order points (y ≥ p,
// or x = 0 with the sign bit set).
var smallOrder = []string{
	"0100000000000000000000000000000000000000000000000000000000000000", // identity
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2
	"0000000000000000000000000000000000000000000000000000000000000080", // order 4
	"0000000000000000000000000000000000000000000000000000000000000000", // order 4
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa", // order 8
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85", // order 8
	"0100000000000000000000000000000000000000000000000000000000000080", // identity, x = 0 with the sign bit
	"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = p + 1 (identity), non-canonical
	"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = p (order 4), non-canonical
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // order 2, sign bit set
}

// torsionSigned signs msg with seed's key, honestly except that R carries
// the small-order component t: R = [r]B + T, k = H(R ‖ A ‖ M), S = r + k·a.
// The cofactored equation accepts it; crypto/ed25519's cofactorless one
// refuses it (unless T is the identity).
func torsionSigned(t *testing.T, seed, msg, tEnc []byte) (pub, sig []byte) {
	t.Helper()
	h := sha512.Sum512(seed)
	a, err := edwards25519.NewScalar().SetBytesWithClamping(h[:32])
	if err != nil {
		t.Fatal(err)
	}
	A := new(edwards25519.Point).ScalarBaseMult(a)
	rh := sha512.Sum512(append(h[32:], msg...))
	r, _ := edwards25519.NewScalar().SetUniformBytes(rh[:])
	T, err := new(edwards25519.Point).SetBytes(tEnc)
	if err != nil {
		t.Fatal(err)
	}
	R := new(edwards25519.Point).Add(new(edwards25519.Point).ScalarBaseMult(r), T)
	kh := sha512.New()
	kh.Write(R.Bytes())
	kh.Write(A.Bytes())
	kh.Write(msg)
	k, _ := edwards25519.NewScalar().SetUniformBytes(kh.Sum(nil))
	S := edwards25519.NewScalar().MultiplyAdd(k, a, r)
	return A.Bytes(), append(R.Bytes(), S.Bytes()...)
}

// TestVerifierMatchesStdlib holds writ's Ed25519 verifier to
// crypto/ed25519.Verify's verdict on every vector, on signatures whose R
// or S is non-canonical or whose R has a small-order component, and on
// random corruptions of valid signatures.
func TestVerifierMatchesStdlib(t *testing.T) {
	cases := vectorCases(t)
	seed := bytes.Repeat([]byte{7}, 32)
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	msg := []byte("a record's Sig_structure")
	good := ed25519.Sign(priv, msg)
	cases = append(cases, verdictCase{"honest", pub, msg, good})

	// R with each small-order component: refused by both.
	for i, enc := range smallOrder[:8] {
		p, s := torsionSigned(t, seed, msg, mustUnhex(t, enc))
		c := verdictCase{"R with small-order component " + smallOrder[i][:8], p, msg, s}
		if same(t, c) != (i == 0) {
			t.Errorf("%s: crypto/ed25519 verdict not the expected one", c.name)
		}
	}
	// R replaced by a small-order point, canonical or not; a signature
	// of all small-order parts; S ≥ ℓ (S + ℓ) and S with high bits.
	for _, enc := range smallOrder {
		r := mustUnhex(t, enc)
		cases = append(cases,
			verdictCase{"R := small order " + enc[:8], pub, msg, append(bytes.Clone(r), good[32:]...)},
			verdictCase{"R small order, S = 0, key " + enc[:8], r, msg, append(bytes.Clone(r), make([]byte, 32)...)})
	}
	l := mustUnhex(t, "edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")
	sPlusL := addLE(good[32:], l)
	cases = append(cases, verdictCase{"S + ℓ", pub, msg, append(bytes.Clone(good[:32]), sPlusL...)})
	high := bytes.Clone(good)
	high[63] |= 0xe0
	cases = append(cases, verdictCase{"S with high bits", pub, msg, high})
	// Non-canonical R: the same point with y + p where y + p < 2^255.
	cases = append(cases, verdictCase{"short signature", pub, msg, good[:63]}, verdictCase{"long signature", pub, msg, append(bytes.Clone(good), 0)})

	// Random corruptions: one bit of R, S or the message.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		s, m := bytes.Clone(good), bytes.Clone(msg)
		if i%3 == 2 {
			m[rng.IntN(len(m))] ^= 1 << rng.IntN(8)
		} else {
			s[rng.IntN(64)] ^= 1 << rng.IntN(8)
		}
		cases = append(cases, verdictCase{"corrupted", pub, m, s})
	}
	valid := 0
	for _, c := range cases {
		if same(t, c) {
			valid++
		}
	}
	if valid < 50 {
		t.Fatalf("only %d of %d cases are valid signatures: the test no longer exercises acceptance", valid, len(cases))
	}
}

// addLE returns a + b for 32-byte little-endian numbers (mod 2^256).
func addLE(a, b []byte) []byte {
	out := make([]byte, 32)
	carry := 0
	for i := range 32 {
		v := int(a[i]) + int(b[i]) + carry
		out[i], carry = byte(v), v>>8
	}
	return out
}

// FuzzVerifierMatchesStdlib: on any key, message and signature, writ's
// Ed25519 verifier gives crypto/ed25519.Verify's verdict.
func FuzzVerifierMatchesStdlib(f *testing.F) {
	seed := bytes.Repeat([]byte{7}, 32)
	priv := ed25519.NewKeyFromSeed(seed)
	msg := []byte("a record's Sig_structure")
	f.Add([]byte(priv.Public().(ed25519.PublicKey)), msg, ed25519.Sign(priv, msg))
	for _, enc := range smallOrder {
		b, _ := hex.DecodeString(enc)
		f.Add(b, msg, append(bytes.Clone(b), make([]byte, 32)...))
	}
	f.Fuzz(func(t *testing.T, key, msg, sig []byte) {
		same(t, verdictCase{"fuzz", key, msg, sig})
	})
}
