package witness_test

import (
	"crypto/rand"
	"errors"
	"path/filepath"
	"testing"

	"filippo.io/age"

	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/sign"
)

func TestResolveName(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	kf, err := witness.GenerateKeyFiles(filepath.Join(t.TempDir(), "w1"), "witness.example/w1", []age.Recipient{id.Recipient()}, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := sign.LoadPrivateKey(kf.PrivateKey, id)
	if err != nil {
		t.Fatal(err)
	}
	const token = "pkcs11:token=T;object=O"
	for _, tc := range []struct {
		name, ref, given, want string
		err                    error
	}{
		{"token, name given", token, "witness.example/t", "witness.example/t", nil},
		{"token, no name", token, "", "", witness.ErrTokenName},
		{"key file: its vkey", kf.PrivateKey, "", "witness.example/w1", nil},
		{"key file: another name", kf.PrivateKey, "witness.example/w2", "", witness.ErrNameMismatch},
		{"key file without vkey, no name", filepath.Join(t.TempDir(), "none.key"), "", "", witness.ErrNoName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := witness.ResolveName(tc.ref, k, tc.given)
			if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Errorf("ResolveName = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}
