package replica

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// writer is a source ledger: an authority log and a decision log.
type writer struct {
	dir         string
	auth, decis *ledger.Log
}

func newWriter(t *testing.T, origin string, seed byte, n int) *writer {
	t.Helper()
	w := &writer{dir: t.TempDir()}
	var err error
	if w.auth, err = ledger.CreateWithHistory(filepath.Join(w.dir, ledgerdir.AuthorityDir), origin, testkit.Key(t, seed), nil); err != nil {
		t.Fatal(err)
	}
	runner := testkit.Key(t, seed+1)
	if w.decis, err = ledger.Create(filepath.Join(w.dir, ledgerdir.DecisionsDir), origin+ledgerdir.DecisionsSuffix+runner.Public().ID()[:16], runner, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.auth.Close(); w.decis.Close() })
	w.add(t, n)
	return w
}

func (w *writer) add(t *testing.T, n int) {
	t.Helper()
	base := w.auth.Size()
	for i := range n {
		if _, err := w.auth.Append([][]byte{[]byte(fmt.Sprintf("authority entry %04d", base+int64(i)))}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.decis.Append([][]byte{[]byte(fmt.Sprintf("decision entry %04d", base+int64(i)))}); err != nil {
			t.Fatal(err)
		}
	}
}

func (w *writer) export(t *testing.T, names ...string) string {
	t.Helper()
	if len(names) == 0 {
		names = []string{"authority", "decisions"}
	}
	logs := map[string]*ledger.Log{"authority": w.auth, "decisions": w.decis}
	var ls []*ledger.Log
	for _, n := range names {
		ls = append(ls, logs[n])
	}
	var b bytes.Buffer
	if err := Export(&b, names, ls); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "ledger.export")
	os.WriteFile(p, b.Bytes(), 0o600)
	return p
}

func verifyReplica(t *testing.T, dir string, want int64) {
	t.Helper()
	for _, sub := range []string{ledgerdir.AuthorityDir, ledgerdir.DecisionsDir} {
		l, err := ledger.Open(filepath.Join(dir, sub), nil)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := l.Verify(l.Key(), nil)
		l.Close()
		if err != nil || cp.Size != want {
			t.Fatalf("%s replica: size %d, %v; want %d", sub, cp.Size, err, want)
		}
	}
}

// TestImportVerifiesTheCopy: an export rewritten in place between the
// verifying and the copying pass is refused, nothing of the copy is kept,
// and the original then imports.
func TestImportVerifiesTheCopy(t *testing.T) {
	w := newWriter(t, "example.com/imp", 1, 20)
	path := w.export(t)
	replica := filepath.Join(t.TempDir(), "replica")
	if _, err := Import(replica, path, nil, nil); err != nil { // a first import: sizes 20
		t.Fatal(err)
	}
	w.add(t, 10)
	path = w.export(t)
	orig, _ := os.ReadFile(path)
	evil := bytes.Replace(orig, []byte("authority entry 0025"), []byte("authority entry 9999"), 1)
	testHookBetweenPasses = func() { os.WriteFile(path, evil, 0o600) }
	defer func() { testHookBetweenPasses = nil }()
	_, err := Import(replica, path, nil, nil)
	// The copying pass finds the change at the first history checkpoint
	// the changed entry belongs to, or at the end.
	if !errors.Is(err, ErrExport) || (!strings.Contains(err.Error(), "changed between the verifying and the copying pass") &&
		!strings.Contains(err.Error(), "the copying pass: entry 25: authority history checkpoint of size 26")) {
		t.Fatalf("Import of a file changed between passes: %v", err)
	}
	verifyReplica(t, replica, 20)
	testHookBetweenPasses = nil
	os.WriteFile(path, orig, 0o600)
	if _, err := Import(replica, path, nil, nil); err != nil {
		t.Fatal(err)
	}
	verifyReplica(t, replica, 30)
}

// TestImportResumes: unsigned entries an interrupted import left past the
// replica's checkpoint are dropped, and importing again completes it; an
// interrupted first import (no checkpoint yet) starts again.
func TestImportResumes(t *testing.T) {
	w := newWriter(t, "example.com/imp", 1, 5)
	replica := filepath.Join(t.TempDir(), "replica")
	if _, err := Import(replica, w.export(t), nil, nil); err != nil {
		t.Fatal(err)
	}
	w.add(t, 5)
	path := w.export(t)
	leftover(t, filepath.Join(replica, ledgerdir.AuthorityDir), 5, 3, true)
	got, err := Import(replica, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Recovered != 3 || got[0].Before != 5 || got[0].After != 10 {
		t.Fatalf("import after an interruption: %+v", got[0])
	}
	verifyReplica(t, replica, 10)

	fresh := filepath.Join(t.TempDir(), "fresh")
	if _, err := Import(fresh, path, nil, nil); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(fresh)
	if _, err := Import(fresh, w.export(t, "authority"), nil, nil); err != nil {
		t.Fatal(err)
	}
	leftover(t, filepath.Join(fresh, ledgerdir.AuthorityDir), 0, 4, false)
	if _, err := Import(fresh, path, nil, nil); err != nil {
		t.Fatal(err)
	}
	verifyReplica(t, fresh, 10)
}

// leftover writes n entries at index from and the stored size past them,
// as an interrupted copy would; without keep, the checkpoint goes too.
func leftover(t *testing.T, dir string, from, n int64, keep bool) {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(txn *badger.Txn) error {
		for i := from; i < from+n; i++ {
			txn.Set(indexKey(prefixEntry, i), []byte("half-copied"))
		}
		if !keep {
			txn.Delete(keyCheckpoint)
		}
		return txn.Set(keySize, sizeBytes(from+n))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestImportBindsSections: the replica keeps the key it was told to
// trust, and the sections must play their roles.
func TestImportBindsSections(t *testing.T) {
	w := newWriter(t, "example.com/imp", 1, 3)
	other := newWriter(t, "example.com/other", 5, 3)
	path := w.export(t)

	// --vkey names the real key, the header another (same length).
	b, _ := os.ReadFile(path)
	forged := bytes.Replace(b, []byte(w.auth.VerifierKey()), []byte(renamedVKey(t, w.auth.VerifierKey(), other.auth.VerifierKey())), 1)
	os.WriteFile(path+".forged", forged, 0o600)
	_, err := Import(filepath.Join(t.TempDir(), "r"), path+".forged", map[string]*formats.LogKey{"authority": w.auth.Key()}, nil)
	if !errors.Is(err, ErrExport) || !strings.Contains(err.Error(), "not the trusted") {
		t.Fatalf("header naming another key: %v", err)
	}

	// The decisions of another ledger beside this authority log.
	var mixed bytes.Buffer
	if err := Export(&mixed, []string{"authority", "decisions"}, []*ledger.Log{w.auth, other.decis}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path+".mixed", mixed.Bytes(), 0o600)
	if _, err := Import(filepath.Join(t.TempDir(), "r"), path+".mixed", nil, nil); !errors.Is(err, ErrExport) || !strings.Contains(err.Error(), "is not example.com/imp/decisions/") {
		t.Fatalf("mixed ledgers: %v", err)
	}

	// A decision log exported as the authority section.
	var swapped bytes.Buffer
	if err := Export(&swapped, []string{"authority"}, []*ledger.Log{w.decis}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path+".swapped", swapped.Bytes(), 0o600)
	if _, err := Import(filepath.Join(t.TempDir(), "r"), path+".swapped", nil, nil); !errors.Is(err, ErrExport) || !strings.Contains(err.Error(), "an authority section carries its checkpoint history") {
		t.Fatalf("swapped sections: %v", err)
	}

	// Not a regular file.
	if _, err := Import(filepath.Join(t.TempDir(), "r"), t.TempDir(), nil, nil); !errors.Is(err, ErrExport) {
		t.Fatalf("a directory as the export: %v", err)
	}
}

// renamedVKey returns a verifier key string of real's length and name
// whose key material is other's.
func renamedVKey(t *testing.T, real, other string) string {
	out := real[:strings.Index(real, "+")] + other[strings.Index(other, "+"):]
	if len(out) != len(real) {
		t.Fatalf("vkeys of different shapes: %q %q", real, other)
	}
	return out
}
