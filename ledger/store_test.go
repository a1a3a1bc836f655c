package ledger_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
)

// TestDamagedStoreKeepsEvidence: a damaged MANIFEST is tamper evidence,
// and no table file is deleted (Badger would delete every table its
// MANIFEST does not list): each is still in the store or set aside.
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
				_, err = l.Verify(testLogKey(t, vkey), nil)
				l.Close()
			}
			if !errors.Is(err, ledger.ErrTampered) {
				t.Fatalf("open/verify: %v, want tamper evidence", err)
			}
			after, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			aside, _ := filepath.Glob(filepath.Join(dir+ledger.UnlistedSuffix, "*.sst"))
			if len(after)+len(aside) != len(before) {
				t.Fatalf("table files: %d before, %d after and %d set aside", len(before), len(after), len(aside))
			}
		})
	}
}

// TestDamagedTableNoPanic: a table file truncated, or with one byte
// changed anywhere, is refused or reported, never a panic and never a
// clean verification; a read-only open (which leaves the index's
// checksum to Badger's open) refuses it as tamper evidence, or opens.
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
		ro := filepath.Join(t.TempDir(), "ro")
		copyDir(t, d, ro)
		if l, err := ledger.OpenReadOnly(ro); err == nil {
			l.Close()
		} else if !errors.Is(err, ledger.ErrTampered) {
			t.Errorf("harm %d: a read-only open: %v, want tamper evidence", i, err)
		}
		l, err := ledger.Open(d, nil)
		if err != nil {
			continue // refused to open: fine, as long as it did not panic
		}
		_, err = l.Verify(l.Key(), nil)
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

// TestUnlistedTableSetAside: a table the MANIFEST does not list (what a
// writer killed mid-flush or mid-compaction leaves, newer or older than
// the listed ones) is set aside by an open for writing and the log still
// verifies; a read-only open refuses, naming the table.
func TestUnlistedTableSetAside(t *testing.T) {
	dir, vkey := newLog(t, 40)
	_, body := firstTable(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "900000.sst"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	var se *ledger.StoreError
	if _, err := ledger.OpenReadOnly(dir); !errors.As(err, &se) || se.File != "900000.sst" || !errors.Is(err, ledger.ErrTampered) {
		t.Fatalf("read-only open: %v", err)
	}
	l, err := ledger.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Verify(testLogKey(t, vkey), nil); err != nil {
		t.Fatalf("verify after setting aside: %v", err)
	}
	l.Close()
	if _, err := os.Stat(filepath.Join(dir+ledger.UnlistedSuffix, "900000.sst")); err != nil {
		t.Fatalf("the leftover was not set aside: %v", err)
	}
	if l, err := ledger.OpenReadOnly(dir); err != nil {
		t.Fatalf("read-only open after: %v", err)
	} else {
		l.Close()
	}

	// Older than a listed table: Badger numbers a table when it starts
	// writing it and compacts concurrently, so a kill can leave this too.
	if err := os.WriteFile(filepath.Join(dir, "000000.sst"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err = ledger.Open(dir, nil)
	if err != nil {
		t.Fatalf("unlisted old table: %v", err)
	}
	if _, err := l.Verify(testLogKey(t, vkey), nil); err != nil {
		t.Fatalf("verify after setting the old table aside: %v", err)
	}
	l.Close()
	if _, err := os.Stat(filepath.Join(dir+ledger.UnlistedSuffix, "000000.sst")); err != nil {
		t.Fatalf("the old leftover was not set aside: %v", err)
	}
}

// TestEmptyMemtableAfterKill: a zero-length memtable log, what a writer
// killed while creating one leaves (TestCrashConsistency once met it), does
// not keep the log from opening, and what was signed is intact.
func TestEmptyMemtableAfterKill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log")
	l, err := ledger.Create(dir, "example.com/mem", testkit.Key(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append([][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if err := os.WriteFile(filepath.Join(dir, "00042.mem"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err = ledger.Open(dir, testkit.Key(t, 1))
	if err != nil {
		t.Fatalf("a zero-length memtable log: %v", err)
	}
	defer l.Close()
	if cp, err := l.Verify(l.Key(), nil); err != nil || cp.Size != 2 {
		t.Fatalf("Verify = %+v, %v", cp, err)
	}
}

// TestEmptyValueLogAfterKill: Badger creates a value log and only then
// sizes it, and deletes one by truncating it to zero before unlinking it;
// a SIGKILL in either gap leaves a zero-length *.vlog, which made Badger
// refuse the directory (`Open existing file: ".../000002.vlog" err: Create
// a new file`, the TestCrashConsistency failure LIMITATIONS.md recorded;
// reproduced with strace killing the child at that ftruncate or unlink).
// An open for writing removes the empty file and the log verifies; a
// read-only open refuses in writ's words, naming the file.
func TestEmptyValueLogAfterKill(t *testing.T) {
	for _, tc := range []struct {
		name string
		harm func(dir string, fids []string) error
	}{
		{"created, not yet sized", func(dir string, fids []string) error {
			return os.WriteFile(filepath.Join(dir, "000099.vlog"), nil, 0o644)
		}},
		{"emptied, not yet unlinked", func(dir string, fids []string) error {
			return os.Truncate(fids[0], 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, vkey := newLog(t, 10)
			for range 2 { // each writing open starts a new value log
				l, err := ledger.Open(dir, nil)
				if err != nil {
					t.Fatal(err)
				}
				l.Close()
			}
			fids, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
			if len(fids) < 2 {
				t.Fatalf("value logs %v, want at least two", fids)
			}
			if err := tc.harm(dir, fids); err != nil {
				t.Fatal(err)
			}
			_, err := ledger.OpenReadOnly(dir)
			var se *ledger.StoreError
			if !errors.As(err, &se) || !strings.HasSuffix(se.File, ".vlog") {
				t.Fatalf("read-only open: %v, want a *StoreError naming the value log", err)
			}
			l, err := ledger.Open(dir, nil)
			if err != nil {
				t.Fatalf("open for writing: %v", err)
			}
			defer l.Close()
			if cp, err := l.Verify(testLogKey(t, vkey), nil); err != nil || cp.Size != 10 {
				t.Fatalf("Verify = %+v, %v", cp, err)
			}
		})
	}
}

// firstTable returns the path and bytes of the first table file of the
// log at dir, failing the test when it has none.
func firstTable(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("the test log has no table files")
	}
	body, err := os.ReadFile(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	return tables[0], body
}
