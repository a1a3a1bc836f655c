package ledger_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
)

// killedCopy returns a copy of the log in dir made while a writer had it
// open, after one more append: its memtable log ends where the writes
// ended, before the size Badger gave the file, as a SIGKILL leaves it (a
// read-only open of it needs a truncation only a writer makes).
func killedCopy(t *testing.T, dir string) string {
	t.Helper()
	l, err := ledger.Open(dir, testkit.Key(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Append([][]byte{[]byte("after the flush")}); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "killed")
	if err := os.Mkdir(cp, 0o700); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, n := range names {
		if filepath.Base(n) == "LOCK" {
			continue
		}
		copyTestFile(t, n, filepath.Join(cp, filepath.Base(n)))
	}
	return cp
}

func copyTestFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLeftoversAfterKill: what TestCrashConsistency met (about one kill in
// ninety) opens for writing and verifies in full: a leftover table beside
// a memtable log with a torn tail (the check of leftovers opened the store
// read-only, which Badger refuses until the log is cut), and a table a
// killed writer left unfinished, its tail zeros (its empty index passed
// the footer check and crashed Badger), or empty (created, not yet
// sized). Each leftover is set aside, not
// deleted; an unfinished table is refused as damage where the MANIFEST
// lists it.
func TestLeftoversAfterKill(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table func(body []byte) []byte
	}{
		{"whole leftover, torn memtable log", func(b []byte) []byte { return b }},
		{"unfinished leftover", func(b []byte) []byte {
			z := append([]byte(nil), b...)
			clear(z[len(z)/3:])
			return z
		}},
		// Badger creates a table's file and only then sizes it: a kill in
		// between leaves it empty (met by cmd/writ's TestStateCrashSync,
		// about one kill of a sync in seventy).
		{"empty leftover", func([]byte) []byte { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, vkey := newLog(t, 40)
			_, body := firstTable(t, dir)
			killed := killedCopy(t, dir)
			if err := os.WriteFile(filepath.Join(killed, "900000.sst"), tc.table(body), 0o644); err != nil {
				t.Fatal(err)
			}
			l, err := ledger.Open(killed, testkit.Key(t, 1))
			if err != nil {
				t.Fatalf("open for writing after a kill: %v", err)
			}
			cp, err := l.Verify(testLogKey(t, vkey), nil)
			l.Close()
			if err != nil || cp.Size != 41 {
				t.Fatalf("Verify = %+v, %v; want 41 entries", cp, err)
			}
			if _, err := os.Stat(filepath.Join(killed+ledger.UnlistedSuffix, "900000.sst")); err != nil {
				t.Fatalf("the leftover was not set aside: %v", err)
			}
		})
	}
	t.Run("unfinished listed table", func(t *testing.T) {
		dir, _ := newLog(t, 40)
		tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
		body, err := os.ReadFile(tables[0])
		if err != nil {
			t.Fatal(err)
		}
		clear(body[len(body)/3:])
		if err := os.WriteFile(tables[0], body, 0o644); err != nil {
			t.Fatal(err)
		}
		var se *ledger.StoreError
		for _, open := range []func() (*ledger.Log, error){
			func() (*ledger.Log, error) { return ledger.OpenReadOnly(dir) },
			func() (*ledger.Log, error) { return ledger.Open(dir, testkit.Key(t, 1)) },
		} {
			if l, err := open(); !errors.As(err, &se) || se.File != filepath.Base(tables[0]) {
				if l != nil {
					l.Close()
				}
				t.Fatalf("an unfinished listed table: %v, want a *StoreError naming it", err)
			}
		}
	})
}
