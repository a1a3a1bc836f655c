package sign_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

func seedKey(t *testing.T, b byte) *sign.PrivateKey {
	t.Helper()
	signer, err := signature.LoadED25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	k, err := sign.NewPrivateKey(signer)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestEncodeRecord(t *testing.T) {
	rec := &schemas.Instruction{V: 1, ID: "0123456789abcdef0123456789abcdef",
		Stream: "demo", Machine: "runner-1", Agent: schemas.ArtifactRef{Name: "agent"}, Transport: "ssh",
		IssuedAt: 1795946400, NotBefore: 1795946400, Expires: 1795950000}
	bare, err := schemas.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	k1, k2 := seedKey(t, 1), seedKey(t, 2)
	for _, tc := range []struct {
		name string
		keys []*sign.PrivateKey
	}{{"unsigned", nil}, {"one key", []*sign.PrivateKey{k1}}, {"two keys", []*sign.PrivateKey{k1, k2}}} {
		out, err := sign.EncodeRecord(rec, tc.keys...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(tc.keys) == 0 {
			if !bytes.Equal(out, bare) {
				t.Errorf("%s: not the bare CBOR", tc.name)
			}
			continue
		}
		env, err := sign.ParseEnvelope(out)
		if err != nil || env.Kind != schemas.KindInstruction || !bytes.Equal(env.Payload, bare) {
			t.Fatalf("%s: %v, kind %v", tc.name, err, env)
		}
		byID := map[string]sign.PublicKey{}
		for _, k := range sign.PublicKeys(tc.keys) {
			byID[k.ID()] = k
		}
		v, err := env.Verify(func(id string) (sign.PublicKey, bool) { k, ok := byID[id]; return k, ok })
		if err != nil || len(v.Keys) != len(tc.keys) {
			t.Errorf("%s: %d keys verified, %v; want %d", tc.name, len(v.Keys), err, len(tc.keys))
		}
	}
	bad := *rec
	bad.Machine = "a,b"
	var fe *schemas.FieldError
	if _, err := sign.EncodeRecord(&bad, k1); !errors.As(err, &fe) {
		t.Errorf("a bad field: %v, want a *schemas.FieldError", err)
	}
}

func TestLoadPublicKeys(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, k := range sign.PublicKeys([]*sign.PrivateKey{seedKey(t, 1), seedKey(t, 2)}) {
		p := filepath.Join(dir, string(rune('a'+i))+".pub")
		if err := os.WriteFile(p, k.PEM(), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	got, err := sign.LoadPublicKeys(paths)
	if err != nil || len(got) != 2 || !got[0].Equal(seedKey(t, 1).Public()) || !got[1].Equal(seedKey(t, 2).Public()) {
		t.Fatalf("%v %v, want the two keys in order", got, err)
	}
	missing := filepath.Join(dir, "none.pub")
	if _, err := sign.LoadPublicKeys([]string{paths[0], missing}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want os.ErrNotExist", err)
	}
	if got, err := sign.LoadPublicKeys(nil); got != nil || err != nil {
		t.Errorf("no paths: %v %v", got, err)
	}
}
