package secrets

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/exitcode"
)

func TestPassphrase(t *testing.T) {
	t.Setenv("WRIT_PASSPHRASE", "from-env")
	path := filepath.Join(t.TempDir(), "pass")
	if err := os.WriteFile(path, []byte("from-file\r\nsecond line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Source{PassphraseFile: path}
	if p, err := s.Passphrase("k", false); err != nil || string(p) != "from-file" {
		t.Errorf("the file's first line: %q %v", p, err)
	}
	if p, err := (&Source{}).Passphrase("k", false); err != nil || string(p) != "from-env" {
		t.Errorf("the environment: %q %v", p, err)
	}
	t.Setenv("WRIT_PASSPHRASE", "")
	_, err := (&Source{Stdin: strings.NewReader("")}).Passphrase("the key", false)
	var xe *exitcode.Error
	if !errors.As(err, &xe) || xe.Code != exitcode.Usage || !strings.Contains(err.Error(), "no passphrase for the key") {
		t.Errorf("no terminal: %v, want bad usage", err)
	}
}

func TestRecipientsOrPassphrase(t *testing.T) {
	s := &Source{Recipients: []string{"age1x"}, WorkFactorSet: true}
	if _, err := s.NewKeyRecipients("k"); err == nil || !strings.Contains(err.Error(), "--work-factor and --recipient") {
		t.Errorf("--recipient with --work-factor: %v", err)
	}
	s = &Source{IdentityFile: "ids", PassphraseFile: "p"}
	if _, err := s.Identities("k"); err == nil || !strings.Contains(err.Error(), "--identity and --passphrase-file") {
		t.Errorf("--identity with --passphrase-file: %v", err)
	}
	if _, err := (&Source{Stdin: strings.NewReader("")}).TokenPIN()("pkcs11:token=t"); err == nil {
		t.Error("a PIN without a terminal")
	}
}
