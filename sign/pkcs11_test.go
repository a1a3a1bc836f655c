//go:build cgo

package sign_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/pkcs11"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/sign"
)

// TestPKCS11 signs with keys in a real SoftHSM2 token. One token per
// process (testkit.SoftHSM), so the cases are subtests, in order: the
// failures first, while no session of this process is logged in to the
// token (PKCS#11 login is per process and token: once logged in, a PIN
// is not checked again).
func TestPKCS11(t *testing.T) {
	module, uri := testkit.SoftHSM(t)
	t.Run("failures", func(t *testing.T) { testTokenFailures(t, uri) })
	var key *sign.PrivateKey
	t.Run("generate", func(t *testing.T) { key = testTokenGenerate(t, module, uri) })
	if key == nil {
		t.Fatal("no token key generated")
	}
	t.Run("imported", func(t *testing.T) { testTokenImported(t, module, uri) })
	t.Run("concurrent", func(t *testing.T) { testTokenConcurrent(t, uri, key) })
	t.Run("threshold", func(t *testing.T) { testTokenThreshold(t, key) })
}

// wantTokenErr checks that err wraps sentinel and ErrToken, names the
// URI ref as printed, and holds no PIN.
func wantTokenErr(t *testing.T, err error, sentinel error, ref, contains string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %v", ref, sentinel)
	}
	if !errors.Is(err, sentinel) || !errors.Is(err, sign.ErrToken) {
		t.Fatalf("%s: %v, want it to wrap %v and ErrToken", ref, err, sentinel)
	}
	u, perr := sign.ParseTokenURI(ref)
	if perr != nil {
		t.Fatal(perr)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, u.String()+": ") || !strings.Contains(msg, contains) {
		t.Fatalf("%s: error %q, want it to start with the URI and contain %q", ref, msg, contains)
	}
	if strings.Contains(msg, testkit.SoftHSMPIN) || strings.Contains(msg, "wrong-pin") {
		t.Fatalf("error %q holds a PIN", msg)
	}
}

func testTokenFailures(t *testing.T, uri func(string) string) {
	dir := t.TempDir()
	write := func(name, data string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wrong := write("wrong", "wrong-pin\n", 0o600)
	open := write("open", testkit.SoftHSMPIN+"\n", 0o644)
	twoLines := write("two", testkit.SoftHSMPIN+"\nwrong-pin\n", 0o600)
	notLib := write("libnot.so", "not a library\n", 0o644)
	bare := "pkcs11:token=" + testkit.SoftHSMLabel + ";object=absent"
	right := func(string) ([]byte, error) { return []byte(testkit.SoftHSMPIN), nil }

	// A wrong PIN, first: from a pin-source file and from the prompt.
	ref := bare + "?pin-source=" + wrong
	_, err := sign.LoadKey(ref, sign.KeyOptions{})
	wantTokenErr(t, err, sign.ErrTokenPIN, ref, `token "writ-test" refused the PIN (pkcs11: 0xA0: CKR_PIN_INCORRECT)`)
	_, err = sign.LoadKey(bare, sign.KeyOptions{PIN: func(string) ([]byte, error) { return []byte("wrong-pin"), nil }})
	wantTokenErr(t, err, sign.ErrTokenPIN, bare, "CKR_PIN_INCORRECT")

	// No PIN at all is not a wrong PIN; neither is a PIN file that is
	// readable by others, or holds two lines.
	_, err = sign.LoadKey(bare, sign.KeyOptions{})
	wantTokenErr(t, err, sign.ErrToken, bare, "no PIN: the URI has no pin-source and none can be asked for")
	if errors.Is(err, sign.ErrTokenPIN) {
		t.Fatalf("no PIN reported as a wrong PIN: %v", err)
	}
	ref = bare + "?pin-source=" + open
	_, err = sign.LoadKey(ref, sign.KeyOptions{})
	wantTokenErr(t, err, sign.ErrKeyFilePermissions, ref, "mode 0644, want 0600")
	ref = bare + "?pin-source=" + twoLines
	_, err = sign.LoadKey(ref, sign.KeyOptions{})
	wantTokenErr(t, err, sign.ErrToken, ref, "holds more than one line")
	cancelled := errors.New("prompt cancelled")
	_, err = sign.LoadKey(bare, sign.KeyOptions{PIN: func(string) ([]byte, error) { return nil, cancelled }})
	wantTokenErr(t, err, cancelled, bare, "prompt cancelled")

	// The module cannot be loaded.
	for _, tc := range []struct{ ref, env, contains string }{
		{uri("k") + "&module-path=/nonexistent/libnone.so", "", "module-path: stat /nonexistent/libnone.so: no such file or directory"},
		{uri("k"), "/nonexistent.so", "$WRIT_PKCS11_MODULE: stat /nonexistent.so: no such file or directory"},
		{uri("k") + "&module-path=" + notLib, "", "is not a loadable PKCS#11 library"},
		{uri("k"), "", "no module: give module-path=/path/to/module.so in the URI, or set WRIT_PKCS11_MODULE"},
		{uri("k"), "libsofthsm2.so", `$WRIT_PKCS11_MODULE "libsofthsm2.so" is not an absolute path`},
	} {
		t.Run("module", func(t *testing.T) {
			t.Setenv(sign.TokenModuleEnv, tc.env)
			_, err := sign.LoadKey(tc.ref, sign.KeyOptions{})
			wantTokenErr(t, err, sign.ErrTokenModule, tc.ref, tc.contains)
			_, err = sign.GenerateTokenKey(tc.ref, sign.KeyOptions{})
			wantTokenErr(t, err, sign.ErrTokenModule, tc.ref, tc.contains)
		})
	}

	// No token with that label.
	ref = strings.Replace(uri("k"), "token=writ-test", "token=absent", 1)
	_, err = sign.LoadKey(ref, sign.KeyOptions{})
	wantTokenErr(t, err, sign.ErrTokenNotFound, ref, `no token labelled "absent" among the 2 tokens of /`)

	// The right PIN, asked with the URI (no PIN in it), but no such key.
	var asked []string
	_, err = sign.LoadKey(bare, sign.KeyOptions{PIN: func(u string) ([]byte, error) { asked = append(asked, u); return right(u) }})
	wantTokenErr(t, err, sign.ErrTokenObject, bare, `no Ed25519 private key (CKK_EC_EDWARDS) with label "absent" in token "writ-test"`)
	if len(asked) != 1 || asked[0] != bare {
		t.Fatalf("PIN asked with %q, want once with %q", asked, bare)
	}
	ref = "pkcs11:token=writ-test;id=%01%02?pin-source=" + strings.TrimPrefix(uri("x"), "pkcs11:token=writ-test;object=x?pin-source=")
	_, err = sign.LoadKey(ref, sign.KeyOptions{})
	wantTokenErr(t, err, sign.ErrTokenObject, ref, "with id 0102 in token")
	_, err = sign.GenerateTokenKey(ref, sign.KeyOptions{})
	wantTokenErr(t, err, sign.ErrTokenURI, ref, "a new key needs a label: give object=LABEL")
}

func testTokenGenerate(t *testing.T, module string, uri func(string) string) *sign.PrivateKey {
	k, err := sign.GenerateTokenKey(uri("root-2"), sign.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("writ token test message")
	sig, err := k.SignMessage(msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Public().Verify(msg, sig); err != nil {
		t.Fatalf("the token's signature does not verify: %v", err)
	}
	if err := k.Public().Verify([]byte("another message"), sig); !errors.Is(err, sign.ErrBadSignature) {
		t.Fatalf("the signature verifies another message: %v", err)
	}
	if again, err := k.SignMessage(msg); err != nil || !bytes.Equal(again, sig) {
		t.Fatalf("Ed25519 is deterministic, the token signed twice differently (%v)", err)
	}

	// The key id from the token is the key id of its exported .pub, the
	// same when loaded again, by label or by CKA_ID.
	pubPath := filepath.Join(t.TempDir(), "root2.pub")
	if err := os.WriteFile(pubPath, k.Public().PEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	pub, err := sign.LoadPublicKey(pubPath)
	if err != nil || pub.ID() != k.Public().ID() || len(pub.ID()) != 64 {
		t.Fatalf(".pub key id %s (%v), token key id %s", pub.ID(), err, k.Public().ID())
	}
	loaded, err := sign.LoadKey(uri("root-2"), sign.KeyOptions{})
	if err != nil || loaded.Public().ID() != k.Public().ID() {
		t.Fatalf("loaded again: %v, %v", loaded, err)
	}

	// What the token holds: a sensitive, never extractable private key
	// whose value cannot be read, a public key of the same CKA_ID.
	raw := openRawToken(t, module)
	priv := raw.one(t, pkcs11.CKO_PRIVATE_KEY, "root-2")
	attrs := raw.attrs(t, priv, pkcs11.CKA_SENSITIVE, pkcs11.CKA_ALWAYS_SENSITIVE, pkcs11.CKA_EXTRACTABLE,
		pkcs11.CKA_NEVER_EXTRACTABLE, pkcs11.CKA_PRIVATE, pkcs11.CKA_SIGN, pkcs11.CKA_ID)
	if fmt.Sprint(attrs[:6]) != "[[1] [1] [0] [1] [1] [1]]" || len(attrs[6]) != 16 {
		t.Fatalf("private key attributes (sensitive, always sensitive, extractable, never extractable, private, sign, id) = %v", attrs)
	}
	if _, err := raw.ctx.GetAttributeValue(raw.sh, priv, []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_VALUE, nil)}); err == nil || !strings.Contains(err.Error(), "CKR_ATTRIBUTE_SENSITIVE") {
		t.Fatalf("reading the private key's value: %v, want CKR_ATTRIBUTE_SENSITIVE", err)
	}
	pubAttrs := raw.attrs(t, raw.one(t, pkcs11.CKO_PUBLIC_KEY, "root-2"), pkcs11.CKA_ID, pkcs11.CKA_EC_POINT)
	if !bytes.Equal(pubAttrs[0], attrs[6]) || !bytes.Equal(pubAttrs[1], append([]byte{0x04, 0x20}, k.Public().Raw()...)) {
		t.Fatalf("public key object: id %x, point %x", pubAttrs[0], pubAttrs[1])
	}
	byID := fmt.Sprintf("pkcs11:token=writ-test;id=%s?pin-source=%s", pct(attrs[6]), strings.SplitN(uri("x"), "pin-source=", 2)[1])
	if k2, err := sign.LoadKey(byID, sign.KeyOptions{}); err != nil || k2.Public().ID() != k.Public().ID() {
		t.Fatalf("loaded by id: %v", err)
	}

	// A second key with the label is refused, and nothing is added.
	_, err = sign.GenerateTokenKey(uri("root-2"), sign.KeyOptions{})
	wantTokenErr(t, err, sign.ErrExists, uri("root-2"), `token "writ-test" already holds an object with label "root-2"; writ never replaces a key`)
	if _, err := sign.LoadKey(uri("root-2"), sign.KeyOptions{}); err != nil {
		t.Fatalf("after the refused generation: %v", err)
	}
	return k
}

func pct(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		fmt.Fprintf(&s, "%%%02X", c)
	}
	return s.String()
}
