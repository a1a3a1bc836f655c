package sign_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
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
	for _, in := range vectorInputs(f) {
		f.Add(in)
	}
	other := testkit.Key(f, 0x77) // signs no vector or seed
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

// vectorInputs returns the inputs of the published vectors, to seed the
// corpus.
func vectorInputs(f *testing.F) [][]byte {
	files, err := filepath.Glob(filepath.Join("..", "testvectors", "data", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no vector files to seed from: %v", err)
	}
	var out [][]byte
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var file struct {
			Vectors []struct {
				Input       string
				TrustedKeys []string `json:"trusted_keys"`
			}
		}
		if err := json.Unmarshal(data, &file); err != nil {
			f.Fatal(err)
		}
		for _, v := range file.Vectors {
			b, _ := hex.DecodeString(v.Input)
			if len(b) <= schemas.MaxRecordSize {
				out = append(out, b)
			}
		}
	}
	return out
}

// FuzzNewPublicKey: an accepted raw key round-trips through PEM and its
// key id is stable; nothing panics.
func FuzzNewPublicKey(f *testing.F) {
	f.Add(testkit.Key(f, 1).Public().Raw())
	f.Add(make([]byte, 32))
	f.Add(bytes.Repeat([]byte{0xff}, 32))
	f.Fuzz(func(t *testing.T, raw []byte) {
		k, err := sign.NewPublicKey(raw)
		if err != nil {
			if !k.IsZero() {
				t.Fatal("error with a key")
			}
			return
		}
		if !bytes.Equal(k.Raw(), raw) {
			t.Fatal("accepted key is not the input")
		}
		k2, err := sign.ParsePublicKeyPEM(k.PEM())
		if err != nil || !k2.Equal(k) || k2.ID() != k.ID() {
			t.Fatalf("PEM round trip: %v", err)
		}
	})
}

// FuzzVerifyForeign: `writ verify`'s parser never panics, and what it
// accepts under a key is an envelope that key signed (the seeds are
// signed by key 0x01, the check uses key 0x01 and 0x77), reported as a
// writ record kind only when the payload decodes as one.
func FuzzVerifyForeign(f *testing.F) {
	a := testkit.Key(f, 1)
	for _, keys := range [][]*sign.PrivateKey{{a}, {a, testkit.Key(f, 2)}} {
		env, err := sign.Sign(schemas.KindInstruction, payload, keys...)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(env)
	}
	for _, in := range vectorInputs(f) {
		f.Add(in)
	}
	other := testkit.Key(f, 0x77)
	f.Fuzz(func(t *testing.T, data []byte) {
		if info, err := sign.VerifyForeign(data, other.Public()); err == nil {
			t.Fatalf("verified under a key that signed nothing: %+v", info)
		}
		info, err := sign.VerifyForeign(data, a.Public())
		if err == nil && info.KeyID != a.Public().ID() {
			t.Fatal("info names another key")
		}
		if err == nil && info.Kind != "" {
			if _, derr := schemas.Decode(info.Kind, info.Payload); derr != nil {
				t.Fatalf("reported as a writ %s record, which the payload is not: %v", info.Kind, derr)
			}
		}
	})
}
