//go:build cgo

package sign_test

// Hostile review of issue 17 (keys in a PKCS#11 token, plain runner key
// files). Tests that need the SoftHSM2 token run in a child process of
// their own (hostileIsolated), since a test process gets one token.

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/sign"
)

const hostileSecret = "HOSTILESECRET4242"

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

// withTimeout runs f and reports whether it returned within d.
func withTimeout(d time.Duration, f func()) bool {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// unblockFIFO opens a FIFO for writing and closes it, so that a reader
// blocked in open(2) returns (reading nothing).
func unblockFIFO(path string) {
	if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// Hostile URIs are refused at parsing, and no error repeats a value.
func TestHostileTokenURIRefused(t *testing.T) {
	base := "pkcs11:token=t;object=o"
	for _, ref := range []string{
		base + "?module-path=relative/" + hostileSecret + ".so",
		base + "?module-path=lib" + hostileSecret + ".so",
		base + "?module-path=%2E%2E/" + hostileSecret + ".so",
		base + "?module-path=./" + hostileSecret + ".so",
		base + "?module-path=/a%00" + hostileSecret + ".so",
		base + "?module-path=/a%0A" + hostileSecret + ".so",
		base + "?module-path=%20/" + hostileSecret + ".so",
		base + "?module-path=/x.so&module-path=/" + hostileSecret + ".so",
		base + "?module-name=" + hostileSecret,
		base + "?pin-source=file://evil.example/" + hostileSecret,
		base + "?pin-source=file:%2F%2Fevil.example/" + hostileSecret,
		base + "?pin-source=|cat%20/" + hostileSecret,
		base + "?pin-source=%7Ccat%20/" + hostileSecret,
		base + "?pin-source=file:" + hostileSecret,
		base + "?pin-source=~/" + hostileSecret,
		base + "?pin-source=" + hostileSecret,
		base + "?pin-source=/a%00" + hostileSecret,
		base + "?pin-source=/x&pin-source=/" + hostileSecret,
		base + ";pin-value=" + hostileSecret,
		base + "?Pin-Value=" + hostileSecret,
		base + "?pin-source=/x&pin-value=" + hostileSecret,
		base + "?pin-value%3D" + hostileSecret,
		base + "?pin%2Dvalue=" + hostileSecret,
		base + ";" + hostileSecret,
		base + "#" + hostileSecret,
		base + "?pin-source=/x#" + hostileSecret,
		base + "?pin-source=/x;" + hostileSecret,
		"pkcs11:token=t%0A" + hostileSecret + ";object=o",
		"pkcs11:token=t%1B[2J" + hostileSecret + ";object=o",
		"pkcs11:token=t;object=%E2%80%AE" + hostileSecret,
		"pkcs11:token=t;object=%FF" + hostileSecret,
		"pkcs11:object=o?pin-source=/" + hostileSecret,
		"pkcs11:token=t?pin-source=/" + hostileSecret,
		"pkcs11:token=" + strings.Repeat("A", 33) + ";object=o" + hostileSecret,
		base + "?pin-source=/" + strings.Repeat("a", sign.MaxTokenURI) + hostileSecret,
		"pkcs11:token=t;object=o?module-path=/x.so%" + hostileSecret,
	} {
		_, err := sign.ParseTokenURI(ref)
		if err == nil {
			t.Errorf("%.120s: accepted", ref)
			continue
		}
		if !errors.Is(err, sign.ErrTokenURI) {
			t.Errorf("%.120s: %v, want ErrTokenURI", ref, err)
		}
		if strings.Contains(err.Error(), hostileSecret) {
			t.Errorf("%.120s: the error repeats a value: %v", ref, err)
		}
		if _, err := sign.LoadKey(ref, sign.KeyOptions{}); err == nil || strings.Contains(err.Error(), hostileSecret) {
			t.Errorf("%.120s: LoadKey: %v", ref, err)
		}
	}
	// Percent-encoding decodes before the path checks: what it decodes to
	// is what is checked, and String re-encodes it.
	u, err := sign.ParseTokenURI(base + "?module-path=%2Fusr%2Flib%2Fx.so&pin-source=file:%2F%2F%2Fetc%2Fpin")
	if err != nil || u.ModulePath != "/usr/lib/x.so" || u.PINSource != "/etc/pin" {
		t.Fatalf("%+v, %v", u, err)
	}
}

// A plain key file is refused when it is owned by another user, open to
// others through a symlink, not a regular file, or larger than the bound.
func TestHostileTokenPlainKeyFile(t *testing.T) {
	dir := t.TempDir()
	k, err := sign.GeneratePlainKeyFiles(filepath.Join(dir, "good"), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.key")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if os.Getuid() == 0 {
		other := write("other.key", data, 0o600)
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := sign.LoadPlainKey(other); !errors.Is(err, sign.ErrKeyFileOwner) {
			t.Errorf("a key file owned by uid 65534, loaded as root: %v", err)
		}
		link := filepath.Join(dir, "link-other.key")
		os.Symlink(other, link)
		if _, err := sign.LoadPlainKey(link); !errors.Is(err, sign.ErrKeyFileOwner) {
			t.Errorf("a symlink to a key file owned by uid 65534: %v", err)
		}
	}
	open := write("open.key", data, 0o640)
	link := filepath.Join(dir, "link-open.key")
	os.Symlink(open, link)
	if _, err := sign.LoadPlainKey(link); !errors.Is(err, sign.ErrKeyFilePermissions) {
		t.Errorf("a symlink (0777) to a 0640 key file: %v", err)
	}
	zero := filepath.Join(dir, "zero.key")
	os.Symlink("/dev/zero", zero)
	if _, err := sign.LoadPlainKey(zero); err == nil {
		t.Error("/dev/zero loaded")
	}
	big := write("big.key", append(bytes.Repeat([]byte(" "), 8<<20), data...), 0o600)
	if _, err := sign.LoadPlainKey(big); !errors.Is(err, sign.ErrInvalidKey) {
		t.Errorf("an 8 MiB key file: %v", err)
	}
	two := write("two.key", append(append([]byte{}, data...), data...), 0o600)
	if _, err := sign.LoadPlainKey(two); !errors.Is(err, sign.ErrInvalidKey) {
		t.Errorf("two keys in one file: %v", err)
	}
	hdr := write("hdr.key", bytes.Replace(data, []byte("KEY-----\n"), []byte("KEY-----\nProc-Type: 4,ENCRYPTED\n\n"), 1), 0o600)
	if _, err := sign.LoadPlainKey(hdr); !errors.Is(err, sign.ErrInvalidKey) {
		t.Errorf("a PEM header: %v", err)
	}
	if got, err := sign.LoadPlainKey(good); err != nil || got.Public().ID() != k.Public().ID() {
		t.Fatalf("the good key: %v", err)
	}
}
