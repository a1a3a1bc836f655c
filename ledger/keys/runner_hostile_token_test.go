//go:build cgo

package keys_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/sign"
)

// Hostile review of issue 17: the runner key's protection statement and
// the stored token key URIs (runner.uri, checkpoint.uri), edited by
// whoever can write the ledger directory. Tests that need the SoftHSM2
// token run in a child process of their own (hostileIsolated), since a
// test process gets one token.

// hostileIsolated reports true in the child process that runs the test;
// in the parent it runs the child and reports its result.
func hostileIsolated(t *testing.T) bool {
	t.Helper()
	const env = "WRIT_HOSTILE_TOKEN_CHILD"
	if os.Getenv(env) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1", "-test.timeout=120s")
	cmd.Env = append(os.Environ(), env+"="+t.Name())
	out, err := cmd.CombinedOutput()
	switch {
	case bytes.Contains(out, []byte("--- SKIP")):
		t.Skipf("child skipped:\n%s", out)
	case err != nil:
		t.Fatalf("child process: %v\n%s", err, out)
	}
	return false
}

func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	os.Remove(path)
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

// A runner kept as file: editing runner.protection, or swapping
// runner.key for another key of this user (a file or a symlink), never
// makes an admission sign with another key or with a weaker one.
func TestHostileTokenRunnerStatementEdits(t *testing.T) {
	dir := t.TempDir()
	if err := openDecisions(dir, ledgerdir.KeyParams{}); err != nil {
		t.Fatal(err)
	}
	stmt := filepath.Join(dir, keys.StatementFile)
	keyPath := filepath.Join(dir, "runner.key")
	for _, s := range []string{"passphrase\n", "pkcs11\n", "file\nfile\n", "file", " file\n", "file\r\n", "FILE\n", strings.Repeat("file\n", 20)} {
		writeFile(t, stmt, s, 0o644)
		if err := openDecisions(dir, ledgerdir.KeyParams{}); err == nil {
			t.Errorf("runner.protection %q: admitted", s)
		}
	}
	writeFile(t, stmt, "file\n", 0o644)
	if err := openDecisions(dir, ledgerdir.KeyParams{}); err != nil {
		t.Fatal(err)
	}
	// Another plain key of this user, 0600: a file, then a symlink.
	other := filepath.Join(t.TempDir(), "other")
	if _, err := sign.GeneratePlainKeyFiles(other, rand.Reader); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(keyPath)
	otherKey, _ := os.ReadFile(other + ".key")
	writeFile(t, keyPath, string(otherKey), 0o600)
	if err := openDecisions(dir, ledgerdir.KeyParams{}); !errors.Is(err, ledger.ErrWrongKey) {
		t.Errorf("another plain key in runner.key: %v", err)
	}
	os.Remove(keyPath)
	os.Symlink(other+".key", keyPath)
	if err := openDecisions(dir, ledgerdir.KeyParams{}); !errors.Is(err, ledger.ErrWrongKey) {
		t.Errorf("runner.key a symlink to another key: %v", err)
	}
	// Stated as pkcs11 with a planted runner.uri beside the plain key.
	os.Remove(keyPath)
	writeFile(t, keyPath, string(orig), 0o600)
	writeFile(t, stmt, "pkcs11\n", 0o644)
	writeFile(t, filepath.Join(dir, "runner.uri"), "pkcs11:token=t;object=o?pin-source=/nonexistent\n", 0o644)
	if err := openDecisions(dir, ledgerdir.KeyParams{}); err == nil {
		t.Error("stated pkcs11 with a planted runner.uri: admitted")
	}
	// A runner key owned by another user (as root).
	os.Remove(filepath.Join(dir, "runner.uri"))
	writeFile(t, stmt, "file\n", 0o644)
	if os.Getuid() == 0 {
		os.Chown(keyPath, 65534, 65534)
		if err := openDecisions(dir, ledgerdir.KeyParams{}); !errors.Is(err, sign.ErrKeyFileOwner) {
			t.Errorf("runner.key owned by uid 65534: %v", err)
		}
		os.Chown(keyPath, 0, 0)
	}
	if err := openDecisions(dir, ledgerdir.KeyParams{}); err != nil {
		t.Fatalf("restored: %v", err)
	}
}

// In a real SoftHSM2 token: a runner key and a checkpoint key in the
// token; their stored URI and public key swapped for another key of the
// same token, a pin-value added, the statement changed: never signs.
func TestHostileTokenStoredURISwaps(t *testing.T) {
	if !hostileIsolated(t) {
		return
	}
	_, uri := testkit.SoftHSM(t)
	for _, o := range []string{"runner", "checkpoint", "attacker"} {
		if _, err := sign.GenerateTokenKey(uri(o), sign.KeyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	attacker, err := sign.LoadKey(uri("attacker"), sign.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	attackerPub := string(attacker.Public().PEM())

	// The runner.
	rdir := filepath.Join(tmp, "runner")
	os.MkdirAll(rdir, 0o700)
	kp := ledgerdir.KeyParams{Protection: keys.ProtectToken, TokenKey: uri("runner")}
	if err := openDecisions(rdir, kp); err != nil {
		t.Fatal(err)
	}
	if err := openDecisions(rdir, ledgerdir.KeyParams{}); err != nil {
		t.Fatal(err)
	}
	ruri, rpub := filepath.Join(rdir, "runner.uri"), filepath.Join(rdir, "runner.pub")
	origURI, origPub := read(t, ruri), read(t, rpub)
	writeFile(t, ruri, uri("attacker")+"\n", 0o644)
	writeFile(t, rpub, attackerPub, 0o644)
	if err := openDecisions(rdir, ledgerdir.KeyParams{}); !errors.Is(err, ledger.ErrWrongKey) {
		t.Errorf("runner.uri and runner.pub swapped to another token key: %v", err)
	}
	writeFile(t, rpub, origPub, 0o644)
	writeFile(t, ruri, strings.TrimSuffix(origURI, "\n")+"&pin-value=HOSTILEPIN99\n", 0o644)
	if err := openDecisions(rdir, ledgerdir.KeyParams{}); err == nil || strings.Contains(err.Error(), "HOSTILEPIN99") {
		t.Errorf("a pin-value in runner.uri: %v", err)
	}
	writeFile(t, ruri, origURI, 0o644)
	// Stated as file, with a plain key planted: the log's key decides.
	stmt := filepath.Join(rdir, keys.StatementFile)
	writeFile(t, stmt, "file\n", 0o644)
	if err := openDecisions(rdir, ledgerdir.KeyParams{}); err == nil {
		t.Error("a token runner stated as file, no runner.key: admitted")
	}
	if _, err := sign.GeneratePlainKeyFiles(filepath.Join(tmp, "planted"), rand.Reader); err != nil {
		t.Fatal(err)
	}
	planted, _ := os.ReadFile(filepath.Join(tmp, "planted.key"))
	writeFile(t, filepath.Join(rdir, "runner.key"), string(planted), 0o600)
	if err := openDecisions(rdir, ledgerdir.KeyParams{}); !errors.Is(err, ledger.ErrWrongKey) {
		t.Errorf("a token runner stated as file with a planted runner.key: %v", err)
	}
	os.Remove(filepath.Join(rdir, "runner.key"))
	writeFile(t, stmt, "pkcs11\n", 0o644)
	if err := openDecisions(rdir, ledgerdir.KeyParams{}); err != nil {
		t.Fatalf("restored runner: %v", err)
	}

	// The checkpoint key.
	key, err := sign.LoadKey(uri("checkpoint"), sign.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cdir := filepath.Join(tmp, "ledger")
	l, err := ledgerdir.InitWithKey(cdir, "example.com/hostile", uri("checkpoint"), key)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	curi, cpub := filepath.Join(cdir, "checkpoint.uri"), filepath.Join(cdir, "checkpoint.pub")
	writeFile(t, curi, uri("attacker")+"\n", 0o644)
	writeFile(t, cpub, attackerPub, 0o644)
	if _, err := ledgerdir.OpenAuthorityWith(cdir, sign.KeyOptions{}); !errors.Is(err, ledger.ErrWrongKey) {
		t.Errorf("checkpoint.uri and checkpoint.pub swapped to another token key: %v", err)
	}
}
