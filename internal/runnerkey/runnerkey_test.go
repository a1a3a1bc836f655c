package runnerkey

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/secrets"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// newLedger returns a directory that holds an (empty) authority log
// directory: enough for dirhint.LedgerDir, and a runner not yet made.
func newLedger(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ledgerdir.AuthorityDir), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestParams: each refusal of keys.Resolve as the usage error naming
// the flags, exactly; and what a good choice resolves to.
func TestParams(t *testing.T) {
	t.Setenv("WRIT_PASSPHRASE", "")
	dir := newLedger(t)
	const uri = "pkcs11:token=T;object=O"
	for _, tc := range []struct {
		name   string
		choice keys.Choice
		want   string // "": no error
		prot   keys.Protection
	}{
		{"default", keys.Choice{}, "", keys.ProtectFile},
		{"token key", keys.Choice{TokenKey: uri}, "", keys.ProtectToken},
		{"bad name", keys.Choice{Protection: "token", ProtectionGiven: true}, `--runner-key-protection "token": one of file, passphrase, pkcs11`, 0},
		{"not a URI", keys.Choice{TokenKey: "runner.key"}, `--runner-key "runner.key": a PKCS#11 URI (pkcs11:token=T;object=O)`, 0},
		{"token key as file", keys.Choice{Protection: "file", ProtectionGiven: true, TokenKey: uri}, "--runner-key is a key in a token: it goes with --runner-key-protection pkcs11, not file", 0},
		{"token without key", keys.Choice{Protection: "pkcs11", ProtectionGiven: true}, "--runner-key-protection pkcs11: give the key's URI with --runner-key pkcs11:token=T;object=O", 0},
		{"secret for a new file", keys.Choice{Secret: "recipient"}, "--recipient: a new runner's key is kept as file by default (unencrypted, readable only by this account), which takes no passphrase or identity; to keep it age-encrypted, add --runner-key-protection passphrase", 0},
		{"secret for token", keys.Choice{TokenKey: uri, Secret: "identity"}, "--identity: this runner's key is kept in a PKCS#11 token, which takes its PIN (pin-source in the URI, or the terminal), no passphrase or identity", 0},
	} {
		kp, note, err := Params(dir, tc.choice, &secrets.Source{})
		if tc.want == "" {
			if err != nil || kp.Protection != tc.prot || note != "" {
				t.Errorf("%s: %v %q %v, want %v", tc.name, kp.Protection, note, err, tc.prot)
			}
			continue
		}
		var ee *exitcode.Error
		if !errors.As(err, &ee) || ee.Code != exitcode.Usage || err.Error() != tc.want {
			t.Errorf("%s: %v, want exit 2 %q", tc.name, err, tc.want)
		}
	}
}

// TestParamsNotALedger: a directory without the authority log is refused
// before the flags are judged, naming --ledger.
func TestParamsNotALedger(t *testing.T) {
	_, _, err := Params(t.TempDir(), keys.Choice{Protection: "nonsense", ProtectionGiven: true}, &secrets.Source{})
	if !errors.Is(err, ledger.ErrNotALog) {
		t.Fatalf("%v, want ledger.ErrNotALog", err)
	}
}

// TestParamsNote: a new key kept as file while WRIT_PASSPHRASE is set
// comes with a note saying the passphrase does not apply.
func TestParamsNote(t *testing.T) {
	t.Setenv("WRIT_PASSPHRASE", "x")
	dir := newLedger(t)
	_, note, err := Params(dir, keys.Choice{}, &secrets.Source{})
	want := "this runner's new key is kept as file (" + filepath.Join(dir, "runner.key") + " unencrypted, mode 0600); WRIT_PASSPHRASE and --work-factor do not apply to it; --runner-key-protection passphrase at the first admission keeps it age-encrypted instead"
	if err != nil || note != want {
		t.Fatalf("%q %v, want %q", note, err, want)
	}
}

// TestRefusalOther: an error that is none of Resolve's refusals (a
// statement that does not read) is bad input, unchanged.
func TestRefusalOther(t *testing.T) {
	bad := errors.New("runner.protection: unreadable")
	var ee *exitcode.Error
	if err := Refusal(keys.Resolved{}, keys.Choice{}, bad); !errors.As(err, &ee) || ee.Code != exitcode.Usage || !errors.Is(err, bad) {
		t.Fatalf("%v, want bad input wrapping %v", err, bad)
	}
}
