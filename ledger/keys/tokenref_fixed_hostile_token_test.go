//go:build cgo

package keys_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/sign"
)

// Hostile review of issue 17: attacks that succeeded before their fixes,
// kept as regression tests (those that always failed are in
// runnerkey_hostile_token_test.go).

// REGRESSION, once an attack: a stored key URI (checkpoint.uri,
// runner.uri) was read whole before its bound was checked, so a FIFO,
// /dev/zero or a huge file there was read without limit. Now a file that
// is not regular is refused before it is opened, and a regular one is
// read up to the bound.
func TestHostileTokenKeyRefUnbounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "checkpoint.uri")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ledgerdir.CheckpointKeyRef(dir); !errors.Is(err, keys.ErrKeyRef) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a FIFO as checkpoint.uri: %v", err)
	}
	os.Remove(fifo)
	if err := os.WriteFile(fifo, []byte(strings.Repeat("p", 8<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ledgerdir.CheckpointKeyRef(dir); !errors.Is(err, keys.ErrKeyRef) || !strings.Contains(err.Error(), "8388608 bytes, at most 4097 expected") {
		t.Fatalf("an 8 MiB checkpoint.uri: %v", err)
	}
}

// buildMarkerModule compiles a shared library whose constructor creates
// the file $WRIT_HOSTILE_MARKER: code that runs when writ dlopens it.
func buildMarkerModule(t *testing.T, dir string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	src := filepath.Join(dir, "evil.c")
	if err := os.WriteFile(src, []byte(`#include <stdlib.h>
#include <stdio.h>
__attribute__((constructor)) static void evil(void) {
	const char *p = getenv("WRIT_HOSTILE_MARKER");
	if (p) { FILE *f = fopen(p, "w"); if (f) { fputs("code ran in writ\n", f); fclose(f); } }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "libevil.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, src).CombinedOutput(); err != nil {
		t.Skipf("cc: %v %s", err, out)
	}
	return so
}

// Whoever can edit checkpoint.uri or runner.uri (a restored backup, a
// ledger directory copied from elsewhere, another process of the runner
// account) chooses the shared library writ dlopens: module-path in the
// stored URI is honoured, before the key is checked against checkpoint.pub
// or the log. Its code runs in writ and is handed the PIN (typed, or read
// from pin-source) at C_Login.
func TestHostileTokenStoredModulePath(t *testing.T) {
	if !hostileIsolated(t) {
		return
	}
	_, uri := testkit.SoftHSM(t)
	tmp := t.TempDir()
	evil := buildMarkerModule(t, tmp)
	for _, o := range []string{"runner", "checkpoint"} {
		if _, err := sign.GenerateTokenKey(uri(o), sign.KeyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
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
	rdir := filepath.Join(tmp, "runner")
	os.MkdirAll(rdir, 0o700)
	if err := openDecisions(rdir, ledgerdir.KeyParams{Protection: keys.ProtectToken, TokenKey: uri("runner")}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path string }{
		{"checkpoint.uri", filepath.Join(cdir, "checkpoint.uri")},
		{"runner.uri", filepath.Join(rdir, "runner.uri")},
	} {
		// A copy per case: dlopen runs a library's constructor once.
		so := filepath.Join(tmp, strings.TrimSuffix(c.name, ".uri")+"-libevil.so")
		data, _ := os.ReadFile(evil)
		os.WriteFile(so, data, 0o755)
		marker := filepath.Join(tmp, c.name+".ran")
		t.Setenv("WRIT_HOSTILE_MARKER", marker)
		orig, _ := os.ReadFile(c.path)
		writeFile(t, c.path, strings.TrimSuffix(string(orig), "\n")+"&module-path="+so+"\n", 0o644)
		if c.name == "checkpoint.uri" {
			_, err = ledgerdir.OpenAuthorityWith(cdir, sign.KeyOptions{})
		} else {
			err = openDecisions(rdir, ledgerdir.KeyParams{})
		}
		if _, serr := os.Stat(marker); serr == nil {
			t.Errorf("%s: module-path=%s added to the stored URI: writ dlopened it and its code ran (then: %v)", c.name, so, err)
		}
		writeFile(t, c.path, string(orig), 0o644)
	}
}

// writ stores a token key URI it then refuses to read: a URI of exactly
// MaxTokenURI (4096) bytes is accepted by ParseTokenURI, LoadKey and
// InitWithKey (which writes it and a newline, 4097 bytes), but keys.ReadRef
// counts the newline against the 4096-byte bound, so the ledger's
// checkpoint key can never be opened again (the same for runner.uri).
func TestHostileTokenLongURIWrittenNotRead(t *testing.T) {
	if !hostileIsolated(t) {
		return
	}
	_, uri := testkit.SoftHSM(t)
	short := uri("checkpoint")
	pre, pin, _ := strings.Cut(short, "?pin-source=")
	pre += "?pin-source="
	pad := sign.MaxTokenURI - len(pre) - len(pin)
	if pad < 0 || len(pin)+pad >= 4096 {
		t.Skip("temp dir path too long")
	}
	long := pre + strings.Repeat("/", pad) + pin
	if len(long) != sign.MaxTokenURI {
		t.Fatalf("built %d bytes", len(long))
	}
	if _, err := sign.GenerateTokenKey(short, sign.KeyOptions{}); err != nil {
		t.Fatal(err)
	}
	key, err := sign.LoadKey(long, sign.KeyOptions{})
	if err != nil {
		t.Fatalf("LoadKey of the 4096-byte URI: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "ledger")
	l, err := ledgerdir.InitWithKey(dir, "example.com/long", long, key)
	if err != nil {
		t.Fatalf("InitWithKey refused it (fine): %v", err)
	}
	l.Close()
	if _, err := ledgerdir.OpenAuthorityWith(dir, sign.KeyOptions{}); err != nil {
		t.Errorf("InitWithKey wrote checkpoint.uri, which OpenAuthorityWith then refuses (errors.Is ErrKeyRef: %v): %v", errors.Is(err, keys.ErrKeyRef), err)
	}
}
