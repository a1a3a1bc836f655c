package sign

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
)

// TestNotKeyFile: a file given as a private key that is none is called
// what it is, before its mode is judged (an executable is not told to
// chmod 600), and its bytes are never printed.
func TestNotKeyFile(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, content string
		mode          os.FileMode
		says          string
	}{
		{"agent", "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00>\x00", 0o755, "this is an executable"},
		{"op.del", "\xd2\x84X\x1e\xa3\x01'\x03rapplication/writ", 0o644, "this is a signed writ record (a COSE_Sign1 envelope), not a key"},
		{"plain.pem", "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n", 0o600, "an unencrypted PEM private key"},
		{"cert.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", 0o600, `a PEM "CERTIFICATE" block`},
		{"notes.txt", "remember to rotate the keys\nsecond line\n", 0o600, `a text file (a passphrase file? writ never prints its text)`},
		{"policy.json", "{\"rules\": []}", 0o600, "a JSON document"},
		{"empty", "", 0o600, "an empty file"},
		{"spaces", "  \n\t\n", 0o600, "a file of white space only"}, // a FuzzDescribe (inspect) crash: Describe read t[0] of nothing
		{"blob", "\x00\x01\x02\x03\xff\xfe", 0o600, "binary data"},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.content), c.mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadPrivateKey(p, mustScrypt(t))
		if !errors.Is(err, ErrNotKeyFile) || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "chmod") {
			t.Errorf("%s: %v, want ErrNotKeyFile saying %q", c.name, err, c.says)
		}
		if c.content != "" && strings.Contains(err.Error(), c.content[len(c.content)/2:]) && c.name != "notes.txt" {
			t.Errorf("%s: the error prints the file's bytes: %v", c.name, err)
		}
	}
}

func mustScrypt(t *testing.T) age.Identity {
	id, err := age.NewScryptIdentity("x")
	if err != nil {
		t.Fatal(err)
	}
	return id
}
