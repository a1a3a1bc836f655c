package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"filippo.io/age"
	"filippo.io/age/armor"
)

// TestNoRawSeedOnDisk runs the whole quickstart (key generation, ledger
// with its checkpoint key, the runner key made by admit, Badger logs),
// then decrypts every private key file it wrote and searches every file
// under the directory for that key's seed, raw, hex or base64. None may
// appear: private keys never touch disk unencrypted.
func TestNoRawSeedOnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "qs")
	var out, errb bytes.Buffer
	if code := run([]string{"writ", "quickstart", "--dir", dir}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("quickstart exited %d: %s", code, errb.String())
	}
	// Its output names keys by the 64-hex ids every command prints, and
	// its last line is a command the user can paste: the test binary, like
	// `go run`, lives in Go's temporary build directory.
	if !regexp.MustCompile(`(?m)^keys \(ids as every writ command prints them\): root [0-9a-f]{64}, operator [0-9a-f]{64}, release engineer [0-9a-f]{64} `).MatchString(out.String()) {
		t.Errorf("quickstart's key line does not give 64-hex key ids:\n%s", out.String())
	}
	if want := "next: go run ./cmd/writ audit --ledger " + filepath.Join(dir, "ledger") + " "; !strings.Contains(out.String(), want) {
		t.Errorf("quickstart's last line is not %q:\n%s", want, out.String())
	}
	pass, err := os.ReadFile(filepath.Join(dir, "passphrase"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := age.NewScryptIdentity(strings.TrimSpace(string(pass)))
	if err != nil {
		t.Fatal(err)
	}
	var seeds [][]byte
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files = append(files, p)
		if strings.HasSuffix(p, ".key") {
			fi, _ := d.Info()
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v", p, fi.Mode().Perm())
			}
			seeds = append(seeds, seedOf(t, p, id))
		}
		return nil
	})
	// root, operator, release, the checkpoint key and the runner key.
	if len(seeds) != 5 {
		t.Fatalf("found %d key files, want 5", len(seeds))
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range seeds {
			for _, form := range [][]byte{s, []byte(hex.EncodeToString(s)), []byte(base64.StdEncoding.EncodeToString(s)[:40])} {
				if bytes.Contains(data, form) {
					t.Errorf("%s contains a private key seed", p)
				}
			}
		}
	}
}

func seedOf(t *testing.T, path string, id age.Identity) []byte {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := age.Decrypt(armor.NewReader(f), id)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	plain, _ := io.ReadAll(r)
	block, _ := pem.Decode(plain)
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return k.(ed25519.PrivateKey).Seed()
}
