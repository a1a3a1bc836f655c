package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/writ-ledger/writ/sign"
)

// RequireSoftHSMEnv is the environment variable that, set to "1", makes
// SoftHSM fail the test instead of skipping it when SoftHSM2 is not
// installed. CI sets it.
const RequireSoftHSMEnv = "WRIT_REQUIRE_SOFTHSM"

// errNoSoftHSM is returned (wrapped) by NewSoftHSMToken when softhsm2-util
// or the SoftHSM2 PKCS#11 module is not installed.
var errNoSoftHSM = errors.New("SoftHSM2 is not installed (Debian: apt-get install -y softhsm2)")

// The test token's label and PINs.
const (
	SoftHSMLabel = "writ-test"
	SoftHSMPIN   = "writ-user-pin-1"
	SoftHSMSOPIN = "writ-so-pin-1"
)

// softHSMModules are where distributions install the SoftHSM2 module:
// Debian and Ubuntu, Debian multiarch, Fedora, /usr/local builds, Homebrew.
var softHSMModules = []string{
	"/usr/lib/softhsm/libsofthsm2.so",
	"/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
	"/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so",
	"/usr/lib64/pkcs11/libsofthsm2.so",
	"/usr/local/lib/softhsm/libsofthsm2.so",
	"/opt/homebrew/lib/softhsm/libsofthsm2.so",
}

// SoftHSMToken is one initialized SoftHSM2 token in its own directory.
type SoftHSMToken struct {
	Module  string // absolute path of the SoftHSM2 PKCS#11 module
	Conf    string // the config file; SOFTHSM2_CONF must name it when the module is initialized
	PINFile string // a 0600 file holding SoftHSMPIN and a newline
}

// SoftHSMInstalled returns the absolute paths of softhsm2-util (on PATH)
// and of the SoftHSM2 PKCS#11 module, or an error wrapping errNoSoftHSM.
func SoftHSMInstalled() (util, module string, err error) {
	if util, err = exec.LookPath("softhsm2-util"); err != nil {
		return "", "", fmt.Errorf("testkit: %w: no softhsm2-util on PATH", errNoSoftHSM)
	}
	if util, err = filepath.Abs(util); err != nil {
		return "", "", err
	}
	for _, p := range softHSMModules {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return util, p, nil
		}
	}
	return "", "", fmt.Errorf("testkit: %w: no libsofthsm2.so in %s", errNoSoftHSM, strings.Join(softHSMModules, ", "))
}

// NewSoftHSMToken creates, under dir, a SoftHSM2 config whose token
// directory is dir/tokens, initializes one token labelled SoftHSMLabel
// with SoftHSMSOPIN and SoftHSMPIN (softhsm2-util --init-token --free),
// and writes dir/pin. It sets no environment variable. The error wraps
// errNoSoftHSM when SoftHSM2 is not installed.
func NewSoftHSMToken(dir string) (*SoftHSMToken, error) {
	util, module, err := SoftHSMInstalled()
	if err != nil {
		return nil, err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	tokens := filepath.Join(dir, "tokens")
	if err := os.MkdirAll(tokens, 0o700); err != nil {
		return nil, err
	}
	tok := &SoftHSMToken{Module: module, Conf: filepath.Join(dir, "softhsm2.conf"), PINFile: filepath.Join(dir, "pin")}
	conf := "directories.tokendir = " + tokens + "\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n"
	if err := os.WriteFile(tok.Conf, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(util, "--init-token", "--free", "--label", SoftHSMLabel, "--so-pin", SoftHSMSOPIN, "--pin", SoftHSMPIN)
	cmd.Env = append(os.Environ(), "SOFTHSM2_CONF="+tok.Conf)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("testkit: softhsm2-util --init-token: %v: %s", err, out)
	}
	if err := os.WriteFile(tok.PINFile, []byte(SoftHSMPIN+"\n"), 0o600); err != nil {
		return nil, err
	}
	return tok, nil
}

// URI returns the PKCS#11 URI of object in the token, with pin-source
// the token's PIN file and no module-path:
// pkcs11:token=writ-test;object=OBJECT?pin-source=/abs/pin.
func (t *SoftHSMToken) URI(object string) string {
	return "pkcs11:token=" + SoftHSMLabel + ";object=" + uriEscape(object, false) + "?pin-source=" + uriEscape(t.PINFile, true)
}

// uriEscape percent-encodes every byte but RFC 3986's unreserved ones
// (and '/' when keepSlash).
func uriEscape(s string, keepSlash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 || keepSlash && c == '/' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// softHSMCalls counts SoftHSM calls in this process.
var softHSMCalls atomic.Int32

// SoftHSM creates a SoftHSM2 token in t.TempDir() (NewSoftHSMToken),
// sets SOFTHSM2_CONF and $WRIT_PKCS11_MODULE for the test (t.Setenv, so
// not in a parallel test), and returns the module path and a URI builder
// (SoftHSMToken.URI: with pin-source, without module-path).
//
// Without SoftHSM2 it skips the test, or fails it when
// WRIT_REQUIRE_SOFTHSM=1. SoftHSM2 reads SOFTHSM2_CONF when it is first
// initialized in a process, and package sign initializes a module once
// per process: a test process that signs in the token gets one token,
// so a second call in one process fails the test (share the token
// between subtests instead).
func SoftHSM(t testing.TB) (module string, uri func(object string) string) {
	t.Helper()
	if !sign.TokensSupported {
		// A build without cgo (Go's default with no C compiler) cannot
		// load a PKCS#11 module: package sign's no-cgo test checks its
		// error instead.
		if os.Getenv(RequireSoftHSMEnv) == "1" {
			t.Fatalf("this test binary was built without cgo, so it has no token keys; %s=1 requires them", RequireSoftHSMEnv)
		}
		t.Skip("skipping: this test binary was built without cgo (no C compiler), so it has no token keys")
	}
	tok, err := NewSoftHSMToken(t.TempDir())
	requireOrSkip(t, err, errNoSoftHSM, RequireSoftHSMEnv)
	if softHSMCalls.Add(1) > 1 {
		t.Fatal("testkit.SoftHSM called twice in one process: the module was initialized with the first token's SOFTHSM2_CONF; share one token between subtests")
	}
	t.Setenv("SOFTHSM2_CONF", tok.Conf)
	t.Setenv("WRIT_PKCS11_MODULE", tok.Module)
	return tok.Module, tok.URI
}
