package sign_test

import (
	"bytes"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// FuzzParseEnvelope: what ParseEnvelope accepts is canonical CBOR, parses
// again to the same kind, payload and signers, and never verifies under a
// key that did not sign; nothing panics.
func FuzzParseEnvelope(f *testing.F) {
	a, b := testkit.Key(f, 1), testkit.Key(f, 2)
	for _, keys := range [][]*sign.PrivateKey{{a}, {a, b}} {
		env, err := sign.Sign(schemas.KindInstruction, payload, keys...)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(env)
	}
	other := testkit.Key(f, 3)
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := sign.ParseEnvelope(data)
		if err != nil {
			if e != nil {
				t.Fatal("error with a partial envelope")
			}
			return
		}
		if err := schemas.CheckCanonical(data); err != nil {
			t.Fatalf("accepted a non-canonical envelope: %v", err)
		}
		again, err := sign.ParseEnvelope(bytes.Clone(data))
		if err != nil || again.Kind != e.Kind || !bytes.Equal(again.Payload, e.Payload) || len(again.Signatures) != len(e.Signatures) {
			t.Fatalf("second parse differs: %v", err)
		}
		v, err := e.Verify(lookup(other))
		if err == nil && len(v.Keys) > 0 {
			t.Fatal("verified under a key that signed nothing")
		}
	})
}

// FuzzParsePublicKeyPEM: an accepted key re-encodes to PEM that parses to
// the same key; nothing panics.
func FuzzParsePublicKeyPEM(f *testing.F) {
	f.Add(testkit.Key(f, 1).Public().PEM())
	f.Add([]byte("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n-----END PUBLIC KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := sign.ParsePublicKeyPEM(data)
		if err != nil {
			return
		}
		k2, err := sign.ParsePublicKeyPEM(k.PEM())
		if err != nil || !k2.Equal(k) {
			t.Fatalf("re-encoded key does not parse back: %v", err)
		}
		if !bytes.Equal(bytes.TrimSpace(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))), bytes.TrimSpace(k.PEM())) {
			t.Fatalf("accepted a non-canonical PEM:\n%q\n%q", data, k.PEM())
		}
	})
}
