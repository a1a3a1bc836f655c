package sign_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/writ-ledger/writ/sign"
)

// rfc8410Key is the private key of RFC 8410 §10.3, and rfc8410Pub its
// public key (§10.1).
const (
	rfc8410Key = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n-----END PRIVATE KEY-----\n"
	rfc8410Pub = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n"
)

func TestPlainKeyFiles(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "runner")
	k, err := sign.GeneratePlainKeyFiles(prefix, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(prefix + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Size() != 119 {
		t.Fatalf("key file mode %04o size %d, want 0600 and 119 bytes", fi.Mode().Perm(), fi.Size())
	}
	data, _ := os.ReadFile(prefix + ".key")
	if !bytes.HasPrefix(data, []byte("-----BEGIN PRIVATE KEY-----\n")) || !bytes.HasSuffix(data, []byte("-----END PRIVATE KEY-----\n")) {
		t.Fatalf("key file is not one PEM PRIVATE KEY block:\n%s", data)
	}
	pub, err := sign.LoadPublicKey(prefix + ".pub")
	if err != nil || !pub.Equal(k.Public()) {
		t.Fatalf("public file = %v, %v; want the key's public half", pub.ID(), err)
	}
	loaded, err := sign.LoadPlainKey(prefix + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Public().Equal(k.Public()) {
		t.Fatal("the loaded key differs from the generated one")
	}
	sig, err := loaded.SignMessage([]byte("m"))
	if err != nil || !ed25519.Verify(k.Public().Ed25519(), []byte("m"), sig) {
		t.Fatalf("the loaded key's signature does not verify: %v", err)
	}

	// Never overwritten: both files exist, then only the public one.
	if _, err := sign.GeneratePlainKeyFiles(prefix, rand.Reader); !errors.Is(err, sign.ErrExists) {
		t.Fatalf("second generate = %v, want ErrExists", err)
	}
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other+".pub", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sign.GeneratePlainKeyFiles(other, rand.Reader); !errors.Is(err, sign.ErrExists) {
		t.Fatalf("generate beside a public file = %v, want ErrExists", err)
	}
	if _, err := os.Stat(other + ".key"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a key file was written beside an existing public file: %v", err)
	}
	after, _ := os.ReadFile(prefix + ".key")
	if !bytes.Equal(after, data) {
		t.Fatal("the key file changed")
	}
}

func TestLoadPlainKeyRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return p
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o620, 0o601, 0o644, 0o660} {
		p := write("open.key", []byte(rfc8410Key), mode)
		_, err := sign.LoadPlainKey(p)
		want := fmt.Sprintf("%s: private key file permissions too open: mode %04o, want 0600: a plain key file must be readable only by its owner (chmod 600 %s)", p, mode, p)
		if !errors.Is(err, sign.ErrKeyFilePermissions) || err.Error() != want {
			t.Fatalf("mode %04o: %v, want %q (ErrKeyFilePermissions)", mode, err, want)
		}
		os.Remove(p)
	}
	if k, err := sign.LoadPlainKey(write("ok.key", []byte(rfc8410Key), 0o400)); err != nil || k == nil {
		t.Fatalf("mode 0400: %v", err)
	}

	// Owned by another account: refused before the mode is looked at.
	var foreign string
	if os.Getuid() == 0 {
		foreign = write("foreign.key", []byte(rfc8410Key), 0o600)
		if err := os.Chown(foreign, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	} else {
		foreign = "/etc/passwd" // root's, readable by all
	}
	var st syscall.Stat_t
	if err := syscall.Stat(foreign, &st); err != nil {
		t.Fatal(err)
	}
	_, err := sign.LoadPlainKey(foreign)
	if !errors.Is(err, sign.ErrKeyFileOwner) {
		t.Fatalf("a file of uid %d: %v, want ErrKeyFileOwner", st.Uid, err)
	}
	wantOwner := fmt.Sprintf("%s: private key file not owned by this user: owned by uid %d, this process runs as uid %d; a plain key file must belong to the account that uses it", foreign, st.Uid, os.Getuid())
	if err.Error() != wantOwner {
		t.Fatalf("owner message %q, want %q", err, wantOwner)
	}

	if _, err := sign.LoadPlainKey(dir); !errors.Is(err, syscall.EISDIR) || err.Error() != "read "+dir+": is a directory" {
		t.Fatalf("a directory: %v, want EISDIR", err)
	}
	big := write("big.key", append([]byte(rfc8410Key), bytes.Repeat([]byte("\n"), sign.MaxPlainKeyFile)...), 0o600)
	if _, err := sign.LoadPlainKey(big); !errors.Is(err, sign.ErrInvalidKey) || !strings.Contains(err.Error(), "file is larger than 1024 bytes") {
		t.Fatalf("an oversized file: %v", err)
	}
	if _, err := sign.LoadPlainKey(filepath.Join(dir, "absent.key")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an absent file: %v", err)
	}
	age := write("age.key", []byte("-----BEGIN AGE ENCRYPTED FILE-----\nYWdlLWVuY3J5cHRpb24ub3JnL3YxCg==\n-----END AGE ENCRYPTED FILE-----\n"), 0o600)
	if _, err := sign.LoadPlainKey(age); !errors.Is(err, sign.ErrInvalidKey) || err.Error() != age+": invalid key: an age-encrypted key file, not a plain one" {
		t.Fatalf("an age file: %v", err)
	}
}

func TestParsePlainKeyPEM(t *testing.T) {
	// Interoperability: RFC 8410's example key gives its public key.
	k, err := sign.ParsePlainKeyPEM([]byte(rfc8410Key))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := sign.ParsePublicKeyPEM([]byte(rfc8410Pub))
	if err != nil || !k.Public().Equal(pub) {
		t.Fatalf("RFC 8410 key's public half = %x, want %x (%v)", k.Public().Raw(), pub.Raw(), err)
	}
	for _, ok := range []string{
		strings.ReplaceAll(rfc8410Key, "\n", "\r\n"),
		"\n\n" + rfc8410Key + " \t\n",
		strings.TrimSuffix(rfc8410Key, "\n"),
	} {
		if got, err := sign.ParsePlainKeyPEM([]byte(ok)); err != nil || !got.Public().Equal(pub) {
			t.Fatalf("%q: %v", ok, err)
		}
	}

	seed := bytes.Repeat([]byte{7}, 32)
	der, _ := x509.MarshalPKCS8PrivateKey(ed25519.NewKeyFromSeed(seed))
	// RFC 5958 v2 (OneAsymmetricKey) with the public key, [1].
	v2 := append([]byte{0x30, 0x51, 0x02, 0x01, 0x01}, der[5:]...)
	v2 = append(v2, 0x81, 0x21, 0x00)
	v2 = append(v2, ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)...)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	block := func(typ string, b []byte, h map[string]string) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b, Headers: h}))
	}
	lines := strings.Split(rfc8410Key, "\n")
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "invalid key: no PEM block"},
		{"raw DER", string(der), "invalid key: no PEM block"},
		{"age file", "-----BEGIN AGE ENCRYPTED FILE-----\nYQ==\n-----END AGE ENCRYPTED FILE-----\n", "invalid key: an age-encrypted key file, not a plain one"},
		{"two keys", rfc8410Key + rfc8410Key, "invalid key: data after the PEM block"},
		{"trailing text", rfc8410Key + "x", "invalid key: data after the PEM block"},
		{"public key", rfc8410Pub, "invalid key: PEM block is \"PUBLIC KEY\", want \"PRIVATE KEY\" without headers"},
		{"old type", block("ED25519 PRIVATE KEY", der, nil), "invalid key: PEM block is \"ED25519 PRIVATE KEY\", want \"PRIVATE KEY\" without headers"},
		{"headers", block("PRIVATE KEY", der, map[string]string{"Proc-Type": "4,ENCRYPTED"}), "invalid key: PEM block is \"PRIVATE KEY\", want \"PRIVATE KEY\" without headers"},
		{"not PKCS #8", block("PRIVATE KEY", []byte{0x30, 0x00}, nil), "invalid key: not a PKCS #8 private key"},
		{"ECDSA", block("PRIVATE KEY", ecDER, nil), "invalid key: key is *ecdsa.PrivateKey, writ accepts Ed25519 only"},
		{"PKCS #8 v2", block("PRIVATE KEY", v2, nil), "invalid key: non-canonical PEM or PKCS #8 encoding"},
		{"rewrapped base64", lines[0] + "\n" + lines[1][:32] + "\n" + lines[1][32:] + "\n" + lines[2] + "\n", "invalid key: non-canonical PEM or PKCS #8 encoding"},
		{"altered END line", strings.Replace(rfc8410Key, "END PRIVATE KEY", "END PRIVATE KEY ", 1), "invalid key: no PEM block"},
	} {
		_, err := sign.ParsePlainKeyPEM([]byte(c.in))
		if !errors.Is(err, sign.ErrInvalidKey) || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// FuzzParsePlainKeyPEM: what ParsePlainKeyPEM accepts is the canonical
// 118-byte text up to surrounding whitespace and CRLF line ends, parses
// again to the same key, and signs under its own public key; errors wrap
// ErrInvalidKey; nothing panics.
func FuzzParsePlainKeyPEM(f *testing.F) {
	f.Add([]byte(rfc8410Key))
	f.Add([]byte(strings.ReplaceAll(rfc8410Key, "\n", "\r\n")))
	f.Add([]byte(rfc8410Pub))
	f.Add([]byte(rfc8410Key + rfc8410Key))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := sign.ParsePlainKeyPEM(bytes.Clone(data))
		if err != nil {
			if k != nil || !errors.Is(err, sign.ErrInvalidKey) {
				t.Fatalf("error %v with key %v", err, k)
			}
			return
		}
		text := bytes.Trim(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), " \t\r\n")
		if len(text) != 118 {
			t.Fatalf("accepted %d bytes of text, the canonical form is 118", len(text))
		}
		again, err := sign.ParsePlainKeyPEM(append(text, '\n'))
		if err != nil || !again.Public().Equal(k.Public()) {
			t.Fatalf("the canonical text parses to another key: %v", err)
		}
		sig, err := k.SignMessage(data)
		if err != nil || !ed25519.Verify(k.Public().Ed25519(), data, sig) {
			t.Fatalf("the key does not sign under its public half: %v", err)
		}
	})
}

// TestLoadPlainKeyPublicFile: a public key file given where the private
// key goes is refused with ErrPublicKeyFile, which a caller branches on to
// say which file to give.
func TestLoadPlainKeyPublicFile(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "k")
	if _, err := sign.GeneratePlainKeyFiles(prefix, rand.Reader); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(prefix+".pub", 0o600); err != nil { // past the mode check
		t.Fatal(err)
	}
	_, err := sign.LoadPlainKey(prefix + ".pub")
	if !errors.Is(err, sign.ErrPublicKeyFile) || !strings.Contains(err.Error(), "give the private key file") {
		t.Fatalf("LoadPlainKey(PREFIX.pub) = %v, want ErrPublicKeyFile", err)
	}
}
