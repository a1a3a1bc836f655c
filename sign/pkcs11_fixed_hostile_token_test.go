//go:build cgo

package sign_test

// Hostile review of issue 17: attacks that succeeded before their fixes,
// kept as regression tests (the helpers are in pkcs11_hostile_token_test.go).

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/sign"
)

// A reference that spells the scheme "PKCS11:" (RFC 3986 §3.1: schemes
// are case-insensitive) with a pin-value is not recognised as a URI, is
// taken for a key file path, and the PIN is echoed in the error.
func TestHostileTokenSchemeCaseEchoesPIN(t *testing.T) {
	for _, ref := range []string{
		"PKCS11:token=t;object=o?pin-value=" + hostileSecret,
		"Pkcs11:token=t;object=o?pin-value=" + hostileSecret,
	} {
		_, err := sign.LoadKey(ref, sign.KeyOptions{})
		if err == nil {
			t.Fatalf("%s: loaded", ref)
		}
		if strings.Contains(err.Error(), hostileSecret) {
			t.Errorf("the error for a URI whose scheme is not lower case holds its pin-value: %v", err)
		}
	}
}

// A plain key file that is a FIFO must be refused, not waited on: the
// type check runs on the opened descriptor, but open(2) on a FIFO blocks
// until a writer comes.
func TestHostileTokenPlainKeyFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "runner.key")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	var err error
	if !withTimeout(3*time.Second, func() { _, err = sign.LoadPlainKey(fifo) }) {
		unblockFIFO(fifo)
		t.Fatal("LoadPlainKey on a FIFO (mode 0600, owned by this user) blocked for 3 s in open(2); want 'not a regular file'")
	}
	if err == nil {
		t.Fatal("a FIFO loaded as a key")
	}
}

// In a real SoftHSM2 token: a pin-source that is a FIFO must not hang
// writ, and a pin-source owned by another user is refused as a plain key
// file would be (LoadPlainKey checks the owner; readPrivateFile does not).
func TestHostileTokenPINSource(t *testing.T) {
	if !hostileIsolated(t) {
		return
	}
	testkit.SoftHSM(t)
	dir := t.TempDir()
	bare := "pkcs11:token=" + testkit.SoftHSMLabel + ";object=absent"

	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(dir, "pin.fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip(err)
		}
		if !withTimeout(3*time.Second, func() { sign.LoadKey(bare+"?pin-source="+fifo, sign.KeyOptions{}) }) {
			unblockFIFO(fifo)
			t.Error("a pin-source that is a FIFO blocked LoadKey for 3 s in open(2); want 'not a regular file'")
		}
	})
	t.Run("other owner", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root to chown")
		}
		pin := filepath.Join(dir, "pin-other")
		if err := os.WriteFile(pin, []byte(testkit.SoftHSMPIN+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(pin, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		_, err := sign.LoadKey(bare+"?pin-source="+pin, sign.KeyOptions{})
		if errors.Is(err, sign.ErrTokenObject) {
			t.Errorf("a pin-source owned by uid 65534 was used to log in (the login succeeded, then: %v)", err)
		}
	})
}
