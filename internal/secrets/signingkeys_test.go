package secrets

import (
	"crypto/rand"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/sign"
)

func TestSigningKeys(t *testing.T) {
	t.Setenv("WRIT_PASSPHRASE", "pw")
	r, err := sign.ScryptRecipient([]byte("pw"), 10)
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(t.TempDir(), "k")
	made, err := sign.GenerateKeyFiles(prefix, []age.Recipient{r}, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s := &Source{Stdin: strings.NewReader("")}
	keys, err := s.SigningKeys([]string{prefix + ".key"})
	if err != nil || len(keys) != 1 || keys[0].Public().ID() != made.Public().ID() {
		t.Fatalf("%v %v, want the key %s", keys, err, made.Public().ID())
	}

	var xe *exitcode.Error
	if _, err := s.SigningKeys(nil); !errors.As(err, &xe) || xe.Code != exitcode.Usage || err.Error() != "--key is required" {
		t.Errorf("no refs: %v, want bad usage", err)
	}
	missing := prefix + ".none"
	var ke *KeyError
	if _, err := s.SigningKeys([]string{prefix + ".key", missing}); !errors.As(err, &ke) || ke.Ref != missing || err.Error() != ke.Err.Error() {
		t.Errorf("a missing key: %v, want a *KeyError naming %s", err, missing)
	}
	t.Setenv("WRIT_PASSPHRASE", "")
	if _, err := s.SigningKeys([]string{prefix + ".key"}); !errors.As(err, &xe) || errors.As(err, &ke) || !strings.Contains(err.Error(), "no passphrase for the signing key") {
		t.Errorf("no passphrase: %v, want Identities' bad usage", err)
	}
}
