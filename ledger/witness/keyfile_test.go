package witness_test

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"filippo.io/age"

	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/sign"
)

// TestKeyFiles: the witness key files written and read back; the name
// comes from PREFIX.vkey, which must be the key's, and every refusal has
// its sentinel; nothing is overwritten.
func TestKeyFiles(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prefix := filepath.Join(dir, "w1")
	if _, err := witness.GenerateKeyFiles(prefix, "bad name", []age.Recipient{id.Recipient()}, rand.Reader); !errors.Is(err, witness.ErrWitnessName) {
		t.Fatalf("bad name: %v", err)
	}
	kf, err := witness.GenerateKeyFiles(prefix, "witness.example/w1", []age.Recipient{id.Recipient()}, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if kf.Name != "witness.example/w1" || kf.VKeyFile != prefix+".vkey" || kf.PrivateKey != prefix+".key" {
		t.Fatalf("%+v", kf)
	}
	if _, err := witness.GenerateKeyFiles(prefix, "witness.example/w1", []age.Recipient{id.Recipient()}, rand.Reader); !errors.Is(err, os.ErrExist) {
		t.Fatalf("again: %v, want os.ErrExist", err)
	}
	k, err := sign.LoadPrivateKey(kf.PrivateKey, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		given, want string
		err         error
	}{
		{"", "witness.example/w1", nil},
		{"witness.example/w1", "witness.example/w1", nil},
		{"witness.example/other", "", witness.ErrNameMismatch},
	} {
		name, err := witness.KeyName(kf.PrivateKey, k, c.given)
		if name != c.want || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("KeyName(%q) = %q, %v; want %q, %v", c.given, name, err, c.want, c.err)
		}
	}
	other, err := sign.GenerateKeyFiles(filepath.Join(dir, "other"), []age.Recipient{id.Recipient()}, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := witness.KeyName(kf.PrivateKey, other, ""); !errors.Is(err, witness.ErrVKeyFile) {
		t.Errorf("another key: %v", err)
	}
	os.Remove(kf.VKeyFile)
	if _, err := witness.KeyName(kf.PrivateKey, k, ""); !errors.Is(err, witness.ErrNoName) {
		t.Errorf("no .vkey, no name: %v", err)
	}
	if name, err := witness.KeyName(kf.PrivateKey, k, "witness.example/w9"); err != nil || name != "witness.example/w9" {
		t.Errorf("no .vkey, a name: %q, %v", name, err)
	}
}
