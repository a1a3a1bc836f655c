package stateview_test

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/stateview"
)

// writer is an authority log whose clock advances as the test says.
type writer struct {
	*ledger.Log
	dir string
	now time.Time
}

func newWriter(t *testing.T) *writer {
	t.Helper()
	w := &writer{dir: filepath.Join(t.TempDir(), "log"), now: time.Unix(1_700_000_000, 0)}
	l, err := ledger.CreateWithHistory(w.dir, "example.com/state", testkit.Key(t, 1), func() time.Time { return w.now })
	if err != nil {
		t.Fatal(err)
	}
	w.Log = l
	t.Cleanup(func() { w.Close() })
	return w
}

// TestStateIndexMovesWithGatedAppends: a new authority log's index covers
// the empty log; an append through a gate writes its entries' keys and
// moves the binding in the same transaction; an append without a gate
// leaves the binding behind, and stateview.Open proves it a prefix of the
// signed tree with the marks below it.
func TestStateIndexMovesWithGatedAppends(t *testing.T) {
	w := newWriter(t)
	if b, ok, err := stateview.NewIndex(w.Log).Binding(); err != nil || !ok || b.Size != 0 {
		t.Fatalf("new log's binding = %+v %v %v, want size 0", b, ok, err)
	}
	w.SetGate(gate{})
	if _, err := w.Append([][]byte{[]byte("m-root"), []byte("i-0"), []byte("m-1")}); err != nil {
		t.Fatal(err)
	}
	cp, err := w.SignedHead()
	if err != nil {
		t.Fatal(err)
	}
	if b, _, _ := stateview.NewIndex(w.Log).Binding(); b.Size != 3 || b.Root != cp.Hash {
		t.Fatalf("binding after a gated append = %+v, want the checkpoint's size 3 and root", b)
	}
	if i, ok, err := stateview.NewIndex(w.Log).Seen(sha256.Sum256([]byte("i-0"))); err != nil || !ok || i != 1 {
		t.Fatalf("Seen(i-0) = %d %v %v, want entry 1", i, ok, err)
	}
	w.SetGate(nil)
	w.now = w.now.Add(time.Second)
	if _, err := w.Append([][]byte{[]byte("m-late")}); err != nil {
		t.Fatal(err)
	}
	if b, _, _ := stateview.NewIndex(w.Log).Binding(); b.Size != 3 {
		t.Fatalf("binding after an append without a gate moved to %d, want it left at 3", b.Size)
	}
	v, err := stateview.Open(w.Log, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []stateview.Mark{{Index: 0, Kind: "mark"}, {Index: 2, Kind: "mark"}}
	if v.Binding.Size != 3 || v.Checkpoint.Size != 4 || !slices.Equal(v.Marks, want) {
		t.Fatalf("stateview.Open = binding %d, checkpoint %d, marks %v; want 3, 4, %v", v.Binding.Size, v.Checkpoint.Size, v.Marks, want)
	}
	e, at, err := v.Entry(3)
	if err != nil || string(e) != "m-late" || !at.Equal(w.now) {
		t.Fatalf("Entry(3) = %q at %v (%v), want m-late at %v", e, at, err, w.now)
	}
	if err := stateview.NewIndex(w.Log).Write(2, slices.Values([]stateview.IndexedKeys{{Index: 3}}), ledger.StateBinding{Size: 4, Root: v.Checkpoint.Hash}); !errors.Is(err, ledger.ErrStateMismatch) {
		t.Fatalf("Write from 2 with the binding at 3: %v, want ErrStateMismatch", err)
	}
	late := stateview.IndexedKeys{Index: 3, StateKeys: ledger.StateKeys{Content: sha256.Sum256([]byte("m-late")), Mark: "mark"}}
	if err := stateview.NewIndex(w.Log).Write(3, slices.Values([]stateview.IndexedKeys{late}), ledger.StateBinding{Size: 4, Root: v.Checkpoint.Hash}); err != nil {
		t.Fatal(err)
	}
	if v, err = stateview.Open(w.Log, nil); err != nil || v.Binding.Size != 4 || len(v.Marks) != 3 {
		t.Fatalf("after Write: %+v %v, want the binding at 4 with 3 marks", v, err)
	}
}

// TestStateViewRefusesAnIndexThatDoesNotMatch: each way a binding or
// mark can fail to match the log is a *StateMismatchError saying why,
// never a state to use.
func TestStateViewRefusesAnIndexThatDoesNotMatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(txn *badger.Txn) error
		says string
	}{
		{"no binding", func(txn *badger.Txn) error { return txn.Delete([]byte("m/state")) }, "keeps no state index"},
		{"short binding", func(txn *badger.Txn) error { return txn.Set([]byte("m/state"), []byte{1, 2}) }, "the binding is 2 bytes"},
		{"an older writ's binding", func(txn *badger.Txn) error {
			return txn.Set([]byte("m/state"), append(binary.BigEndian.AppendUint64(nil, 0), make([]byte, 32)...))
		}, "the binding is 40 bytes, not 72"},
		{"wrong root", func(txn *badger.Txn) error {
			return txn.Set([]byte("m/state"), append(binary.BigEndian.AppendUint64(nil, 2), make([]byte, 64)...))
		}, "is not a prefix of the signed tree"},
		{"past the log", func(txn *badger.Txn) error {
			return txn.Set([]byte("m/state"), append(binary.BigEndian.AppendUint64(nil, 9), make([]byte, 64)...))
		}, "the binding covers 9 entries, the signed checkpoint 3"},
		{"empty mark", func(txn *badger.Txn) error {
			return txn.Set(binary.BigEndian.AppendUint64([]byte("s/m"), 1), nil)
		}, "the mark of entry 1: a kind of 0 bytes"},
		{"a mark missing", func(txn *badger.Txn) error {
			return txn.Delete(binary.BigEndian.AppendUint64([]byte("s/m"), 2))
		}, "the index's 1 marks below entry 3 are not those its binding was written with"},
		{"a mark added", func(txn *badger.Txn) error {
			return txn.Set(binary.BigEndian.AppendUint64([]byte("s/m"), 1), []byte("mark"))
		}, "the index's 3 marks below entry 3 are not those"},
		{"a mark changed", func(txn *badger.Txn) error {
			return txn.Set(binary.BigEndian.AppendUint64([]byte("s/m"), 0), []byte("revocation"))
		}, "the index's 2 marks below entry 3 are not those"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWriter(t)
			w.SetGate(gate{})
			if _, err := w.Append([][]byte{[]byte("m-root"), []byte("i-0"), []byte("m-1")}); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if err := testkit.EditStore(w.dir, tc.edit); err != nil {
				t.Fatal(err)
			}
			l, err := ledger.Open(w.dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			_, err = stateview.Open(l, nil)
			var me *ledger.StateMismatchError
			if !errors.As(err, &me) || !strings.Contains(me.Reason, tc.says) {
				t.Fatalf("stateview.Open = %v, want a *StateMismatchError saying %q", err, tc.says)
			}
		})
	}
}

// TestDrop: Drop removes every key of the index and its binding, over
// more rounds than one (each round resumes after the last key the one
// before deleted).
func TestDrop(t *testing.T) {
	w := newWriter(t)
	w.SetGate(gate{})
	for r := range 3 {
		var batch [][]byte
		for _, e := range markedEntries(4000) {
			batch = append(batch, fmt.Appendf(e, "-%d", r))
		}
		if _, err := w.Append(batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := stateview.NewIndex(w.Log).Drop(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := stateview.NewIndex(w.Log).Binding(); ok || err != nil {
		t.Fatalf("binding after Drop: %v %v", ok, err)
	}
	if m, err := stateview.NewIndex(w.Log).Marks(w.Size()); len(m) != 0 || err != nil {
		t.Fatalf("marks after Drop: %d %v", len(m), err)
	}
	n := 0
	if err := stateview.NewIndex(w.Log).SeenKeys(func([32]byte, int64) error { n++; return nil }); n != 0 || err != nil {
		t.Fatalf("content keys after Drop: %d %v", n, err)
	}
}

// markedEntries are n entries that markGate marks.
func markedEntries(n int) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, fmt.Appendf(nil, "m-%d", i))
	}
	return out
}
