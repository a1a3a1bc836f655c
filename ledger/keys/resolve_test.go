package keys_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

func TestRunnerName(t *testing.T) {
	if keys.Runner != ledgerdir.RunnerKey {
		t.Fatalf("keys.Runner %q, ledgerdir.RunnerKey %q", keys.Runner, ledgerdir.RunnerKey)
	}
}

// TestResolve: each refusal of Resolve, with the sentinel the command
// line maps to its flags, and what a choice resolves to.
func TestResolve(t *testing.T) {
	fresh := t.TempDir()
	made := t.TempDir() // a runner whose key is kept as file
	if err := openDecisions(made, ledgerdir.KeyParams{}); err != nil {
		t.Fatal(err)
	}
	const uri = "pkcs11:token=T;object=O"
	for _, c := range []struct {
		name string
		dir  string
		c    keys.Choice
		want error
		got  keys.Protection
	}{
		{"default", fresh, keys.Choice{}, nil, keys.ProtectFile},
		{"passphrase asked", fresh, keys.Choice{Protection: "passphrase", ProtectionGiven: true, Secret: "identity"}, nil, keys.ProtectPassphrase},
		{"token key", fresh, keys.Choice{TokenKey: uri}, nil, keys.ProtectToken},
		{"stated", made, keys.Choice{}, nil, keys.ProtectFile},
		{"empty name", fresh, keys.Choice{ProtectionGiven: true}, keys.ErrProtectionName, 0},
		{"bad name", fresh, keys.Choice{Protection: "token", ProtectionGiven: true}, keys.ErrProtection, 0},
		{"not a URI", fresh, keys.Choice{TokenKey: "runner.key"}, keys.ErrNotTokenURI, 0},
		{"token key as file", fresh, keys.Choice{Protection: "file", ProtectionGiven: true, TokenKey: uri}, keys.ErrTokenKeyProtection, 0},
		{"token key too late", made, keys.Choice{TokenKey: uri}, keys.ErrTokenKeyExists, 0},
		{"token without key", fresh, keys.Choice{Protection: "pkcs11", ProtectionGiven: true}, keys.ErrNoTokenKey, 0},
		{"fixed", made, keys.Choice{Protection: "passphrase", ProtectionGiven: true}, keys.ErrProtectionFixed, 0},
		{"secret for file", made, keys.Choice{Secret: "passphrase-file"}, keys.ErrSecretUnused, 0},
		{"secret for a new file", fresh, keys.Choice{Secret: "recipient"}, keys.ErrSecretUnused, 0},
		{"secret for token", fresh, keys.Choice{TokenKey: uri, Secret: "identity"}, keys.ErrSecretUnused, 0},
	} {
		r, err := keys.Resolve(c.dir, c.c)
		if c.want != nil {
			if !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.name, err, c.want)
			}
			continue
		}
		if err != nil || r.Protection != c.got || r.Statement != filepath.Join(c.dir, keys.StatementFile) {
			t.Errorf("%s: %+v %v, want %s", c.name, r, err, c.got)
		}
	}
	// A statement that does not read is ErrProtection, before any flag.
	if err := os.WriteFile(filepath.Join(made, keys.StatementFile), []byte("none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Resolve(made, keys.Choice{Protection: "x", ProtectionGiven: true}); !errors.Is(err, keys.ErrProtection) || errors.Is(err, keys.ErrProtectionName) {
		t.Fatalf("a bad statement: %v", err)
	}
}
