package keys_test

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/sign"
)

const runnerOrigin = "example.com/runner-test"

// openDecisions opens (or makes) the decision log at dir and closes it.
func openDecisions(dir string, kp ledgerdir.KeyParams) error {
	if kp.Rand == nil {
		kp.Rand = rand.Reader
	}
	l, err := ledgerdir.OpenDecisions(dir, runnerOrigin, kp)
	if err != nil {
		return err
	}
	return l.Close()
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestKeyProtectionNames(t *testing.T) {
	if got := keys.ProtectionNames(); !slices.Equal(got, []string{"file", "passphrase", "pkcs11"}) {
		t.Fatalf("names %q", got)
	}
	for _, p := range []keys.Protection{keys.ProtectFile, keys.ProtectPassphrase, keys.ProtectToken} {
		if q, err := keys.ParseProtection(p.String()); err != nil || q != p {
			t.Fatalf("%s: parsed %v, %v", p, q, err)
		}
	}
	if keys.DefaultProtection != keys.ProtectFile {
		t.Fatal("the default is not file")
	}
	if s := keys.Protection(0).String(); s != "none" {
		t.Fatalf("zero value %q", s)
	}
	if s := keys.Protection(9).String(); s != "Protection(9)" {
		t.Fatalf("no protection %q", s)
	}
	for _, bad := range []string{"", "File", "file ", "token", "none"} {
		_, err := keys.ParseProtection(bad)
		if !errors.Is(err, keys.ErrProtection) || !strings.HasSuffix(err.Error(), "is none of file, passphrase, pkcs11") {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

func TestRunnerKeyKeptAsFile(t *testing.T) {
	dir := t.TempDir()
	if p, ok, err := keys.RunnerProtection(dir); p != 0 || ok || err != nil {
		t.Fatalf("before the first admission: %v %v %v", p, ok, err)
	}
	if err := openDecisions(dir, ledgerdir.KeyParams{}); err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "runner.key")
	if got := read(t, filepath.Join(dir, "runner.protection")); got != "file\n" {
		t.Fatalf("runner.protection = %q", got)
	}
	fi, err := os.Stat(keyPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("runner.key: %v %v", fi, err)
	}
	k, err := sign.LoadPlainKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if pub, err := sign.LoadPublicKey(filepath.Join(dir, "runner.pub")); err != nil || !pub.Equal(k.Public()) {
		t.Fatalf("runner.pub: %v", err)
	}
	if p, ok, err := keys.RunnerProtection(dir); p != keys.ProtectFile || !ok || err != nil {
		t.Fatalf("stated: %v %v %v", p, ok, err)
	}
	// Reopened as stated, or with the stated protection named.
	for _, kp := range []ledgerdir.KeyParams{{}, {Protection: keys.ProtectFile}} {
		if err := openDecisions(dir, kp); err != nil {
			t.Fatal(err)
		}
	}
	// Not as another protection, nor with a secret.
	id, _ := sign.ScryptIdentity([]byte("pw"))
	stmt := filepath.Join(dir, "runner.protection")
	for kp, want := range map[*ledgerdir.KeyParams]string{
		{Protection: keys.ProtectPassphrase}: "runner key: runner key protection: the runner key is kept as file (" + stmt + "), not passphrase: the protection is chosen at the runner's first admission and fixed after",
		{Identities: []age.Identity{id}}:     "runner key: runner key protection: the runner key is kept as file (" + stmt + "): it is not encrypted, and takes no identity or passphrase",
	} {
		if err := openDecisions(dir, *kp); !errors.Is(err, keys.ErrProtection) || err.Error() != want {
			t.Fatalf("%+v: %v\nwant %s", kp, err, want)
		}
	}
	// A key file others may read is refused, naming the rule.
	if err := os.Chmod(keyPath, 0o640); err != nil {
		t.Fatal(err)
	}
	err = openDecisions(dir, ledgerdir.KeyParams{})
	if !errors.Is(err, sign.ErrKeyFilePermissions) || !strings.Contains(err.Error(), "mode 0640, want 0600: a plain key file must be readable only by its owner") {
		t.Fatalf("mode 0640: %v", err)
	}
	os.Chmod(keyPath, 0o600)
	// A lost statement is not taken for passphrase.
	if err := os.Remove(stmt); err != nil {
		t.Fatal(err)
	}
	want := "runner key protection: " + stmt + " is missing and " + keyPath + ` is an unencrypted key: restore runner.protection (it holds "file") with the key, or make a new runner`
	if _, _, err := keys.RunnerProtection(dir); !errors.Is(err, keys.ErrProtection) || err.Error() != want {
		t.Fatalf("lost statement: %v", err)
	}
	if err := openDecisions(dir, ledgerdir.KeyParams{}); !errors.Is(err, keys.ErrProtection) {
		t.Fatalf("open without the statement: %v", err)
	}
}

func TestRunnerKeyKeptWithPassphrase(t *testing.T) {
	id, _ := sign.ScryptIdentity([]byte("pw"))
	r, _ := sign.ScryptRecipient([]byte("pw"), sign.MinWorkFactor)
	for _, kp := range []ledgerdir.KeyParams{
		{Recipients: []age.Recipient{r}}, // inferred from the recipients
		{Recipients: []age.Recipient{r}, Protection: keys.ProtectPassphrase},
	} {
		dir := t.TempDir()
		if err := openDecisions(dir, kp); err != nil {
			t.Fatal(err)
		}
		if got := read(t, filepath.Join(dir, "runner.protection")); got != "passphrase\n" {
			t.Fatalf("runner.protection = %q", got)
		}
		if !strings.HasPrefix(read(t, filepath.Join(dir, "runner.key")), "-----BEGIN AGE ENCRYPTED FILE-----\n") {
			t.Fatal("runner.key is not age-encrypted")
		}
		if err := openDecisions(dir, ledgerdir.KeyParams{Identities: []age.Identity{id}}); err != nil {
			t.Fatal(err)
		}
		if err := openDecisions(dir, ledgerdir.KeyParams{Protection: keys.ProtectFile}); !errors.Is(err, keys.ErrProtection) {
			t.Fatalf("opened as file: %v", err)
		}
		// A runner made before the statement existed is kept with a
		// passphrase.
		if err := os.Remove(filepath.Join(dir, "runner.protection")); err != nil {
			t.Fatal(err)
		}
		if p, ok, err := keys.RunnerProtection(dir); p != keys.ProtectPassphrase || !ok || err != nil {
			t.Fatalf("without a statement: %v %v %v", p, ok, err)
		}
		if err := openDecisions(dir, ledgerdir.KeyParams{Identities: []age.Identity{id}}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRunnerKeyProtectionRefused(t *testing.T) {
	r, _ := sign.ScryptRecipient([]byte("pw"), sign.MinWorkFactor)
	// A file key takes no recipients, and a protection must be one.
	for kp, want := range map[*ledgerdir.KeyParams]string{
		{Protection: keys.ProtectFile, Recipients: []age.Recipient{r}}: "creating runner key: runner key protection: a key kept as file is not encrypted to recipients",
		{Protection: 7}:                      "creating runner key: runner key protection: Protection(7) is none of file, passphrase, pkcs11",
		{Protection: keys.ProtectPassphrase}: "creating runner key: no recipient to encrypt the key file to",
	} {
		dir := t.TempDir()
		if err := openDecisions(dir, *kp); err == nil || err.Error() != want {
			t.Fatalf("%+v: %v\nwant %s", kp, err, want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("%+v left %v", kp, entries)
		}
	}
	// A failed first admission leaves no key and no statement.
	dir := t.TempDir()
	if _, err := ledgerdir.OpenDecisions(dir, "bad origin", ledgerdir.KeyParams{Rand: rand.Reader}); err == nil {
		t.Fatal("a bad origin made a decision log")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a failed creation left %v", entries)
	}
	// A statement that is not one protection's name and a newline.
	if err := openDecisions(dir, ledgerdir.KeyParams{}); err != nil {
		t.Fatal(err)
	}
	stmt := filepath.Join(dir, "runner.protection")
	for _, bad := range []string{"", "file", "file\n\n", "File\n", "passphrase \n", "file\r\n", "token\n", strings.Repeat("x", 65)} {
		if err := os.WriteFile(stmt, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := keys.RunnerProtection(dir)
		want := "runner key protection: " + stmt + ": want one line naming file or passphrase or pkcs11"
		if len(bad) > 64 {
			want = "runner key protection: " + stmt + ": 65 bytes, at most 64 expected"
		}
		if !errors.Is(err, keys.ErrProtection) || err.Error() != want {
			t.Fatalf("%q: %v", bad, err)
		}
		if err := openDecisions(dir, ledgerdir.KeyParams{}); !errors.Is(err, keys.ErrProtection) {
			t.Fatalf("%q: open gave %v", bad, err)
		}
	}
}
