package ledger_test

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
)

// TestDropState: DropState removes the binding, every content key and
// every mark, whatever their number (more than one batch of each), so
// that an index written again from a replay holds nothing of the old one.
func TestDropState(t *testing.T) {
	l, err := ledger.CreateWithHistory(filepath.Join(t.TempDir(), "log"), "example.com/drop", testkit.Key(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const n = 5000 // past one batch of keys
	var entries [][]byte
	for i := range n {
		entries = append(entries, []byte(fmt.Sprintf("entry %d", i)))
	}
	for i := 0; i < n; i += ledger.MaxBatchEntries {
		if _, err := l.Append(entries[i:min(i+ledger.MaxBatchEntries, n)]); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(yield func(ledger.IndexedKeys) bool) {
		for i, e := range entries {
			k := ledger.IndexedKeys{Index: int64(i), StateKeys: ledger.StateKeys{Content: sha256.Sum256(e), Mark: "delegation"}}
			if !yield(k) {
				return
			}
		}
	}
	root, err := l.TreeHash(n)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WriteState(0, keys, ledger.StateBinding{Size: n, Root: root}); err != nil {
		t.Fatal(err)
	}
	if marks, err := l.Marks(n); err != nil || len(marks) != n {
		t.Fatalf("written: %d marks (%v), want %d", len(marks), err, n)
	}
	if err := l.DropState(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := l.StateBinding(); ok || err != nil {
		t.Fatalf("binding after DropState: %v, %v", ok, err)
	}
	if marks, err := l.Marks(n); err != nil || len(marks) != 0 {
		t.Fatalf("%d marks after DropState (%v)", len(marks), err)
	}
	seen := 0
	if err := l.SeenKeys(func([32]byte, int64) error { seen++; return nil }); err != nil || seen != 0 {
		t.Fatalf("%d content keys after DropState (%v)", seen, err)
	}
}
