package verify

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/stateview"
	"github.com/writ-ledger/writ/schemas"
)

// StateIndexer collects what a replay into an authority state adds to the
// log's state index (stateview.Index.Write): each applied record's
// content key, and the kind of each that changed the state (every kind
// but an instruction), so that a writer that stores entries without the
// append gate (a replica's sync) keeps the index beside them, and the
// next reader extends the state instead of replaying the log
// (LoadAuthority). Its memory is the marked entries' for a state that
// applied every entry from 0 (whose content keys it reads back), else one
// key per entry applied. A StateIndexer is used by one goroutine.
type StateIndexer struct {
	st     *delegation.State
	from   int64                   // the first entry the replay applies
	marks  []stateview.IndexedKeys // marked entries, for a state from 0
	keys   []stateview.IndexedKeys // every entry, for a state over a persisted one
	bulked int64                   // the entries whose unmarked content keys Bulk loaded (0: none)
}

// NewStateIndexer returns an indexer of the entries from from on that a
// replay applies to st (st.Size() must be from).
func NewStateIndexer(st *delegation.State, from int64) *StateIndexer {
	return &StateIndexer{st: st, from: from}
}

// Applied records a; it is the replay's applied callback (replay.Apply).
func (x *StateIndexer) Applied(a *delegation.Applied) {
	k := stateview.IndexedKeys{Index: a.Index, StateKeys: stateKeys(a)}
	if _, ok := x.st.ContentKey(a.Index); ok {
		if k.Mark != "" {
			x.marks = append(x.marks, k)
		}
		return
	}
	x.keys = append(x.keys, k)
}

// Write writes the keys of the entries from x's first to b.Size (every
// one the replay applied) to l's state index and moves its binding to b
// (stateview.Index.Write); the state's lookups then go to l
// (delegation.State.Persisted), and x is spent. Errors: the replay did
// not apply exactly those entries; stateview.Index.Write's.
func (x *StateIndexer) Write(l *ledger.Log, b ledger.StateBinding) error {
	if x.st.Size() != b.Size {
		return fmt.Errorf("the state covers %d entries, the binding %d", x.st.Size(), b.Size)
	}
	if x.bulked != 0 {
		return x.bind(l, b)
	}
	keys := func(yield func(stateview.IndexedKeys) bool) {
		marks, rest := x.marks, x.keys
		for i := x.from; i < b.Size; i++ {
			var k stateview.IndexedKeys
			switch c, ok := x.st.ContentKey(i); {
			case len(marks) > 0 && marks[0].Index == i:
				k, marks = marks[0], marks[1:]
			case ok:
				k = stateview.IndexedKeys{Index: i, StateKeys: ledger.StateKeys{Content: c}}
			case len(rest) > 0 && rest[0].Index == i:
				k, rest = rest[0], rest[1:]
			default:
				return // not reached: checkCovered found every entry
			}
			if !yield(k) {
				return
			}
		}
	}
	if err := x.checkCovered(b.Size); err != nil {
		return err
	}
	if err := stateview.NewIndex(l).Write(x.from, keys, b); err != nil {
		return err
	}
	x.st.Persisted(stateview.NewIndex(l))
	x.marks, x.keys = nil, nil
	return nil
}

// Bulk puts the content keys of the unmarked entries (instructions) of a
// state that applied every entry from 0 into w's bulk load (a new
// replica's, ledger.ReplicaWriter.BulkSeen), sorted by content key: a
// million of them sort in a fraction of a second, where transactions
// took seconds and left tables to compact. Write then stores only the
// marked entries' keys and the binding. Nothing is loaded, and Write
// stores every key, for another state or a writer that is not bulk
// loading. Errors: BulkSeen's.
func (x *StateIndexer) Bulk(w *ledger.ReplicaWriter) error {
	n := x.st.Size()
	if x.from != 0 || n == 0 || x.bulked != 0 {
		return nil
	}
	if _, ok := x.st.ContentKey(n - 1); !ok {
		return nil
	}
	order := make([]int64, 0, n-int64(len(x.marks)))
	marks := x.marks
	for i := range n {
		if len(marks) > 0 && marks[0].Index == i {
			marks = marks[1:]
			continue
		}
		order = append(order, i)
	}
	key := func(i int64) [32]byte { c, _ := x.st.ContentKey(i); return c }
	slices.SortFunc(order, func(a, b int64) int {
		ka, kb := key(a), key(b)
		if c := cmp.Compare(binary.BigEndian.Uint64(ka[:8]), binary.BigEndian.Uint64(kb[:8])); c != 0 {
			return c
		}
		return bytes.Compare(ka[8:], kb[8:])
	})
	ok, err := w.BulkSeen(func(yield func([32]byte, int64) bool) {
		for _, i := range order {
			if !yield(key(i), i) {
				return
			}
		}
	})
	if ok && err == nil {
		x.bulked = n
	}
	return err
}

// bind stores the marked entries' keys and the binding over what Bulk
// loaded.
func (x *StateIndexer) bind(l *ledger.Log, b ledger.StateBinding) error {
	if b.Size != x.bulked {
		return fmt.Errorf("the state index loaded covers %d entries, the binding %d", x.bulked, b.Size)
	}
	if err := stateview.NewIndex(l).Write(0, slices.Values(x.marks), b); err != nil {
		return err
	}
	x.st.Persisted(stateview.NewIndex(l))
	x.marks, x.keys, x.bulked = nil, nil, 0
	return nil
}

// checkCovered checks that the keys recorded, with the content keys the
// state holds, cover every entry from x.from to n.
func (x *StateIndexer) checkCovered(n int64) error {
	if _, ok := x.st.ContentKey(n - 1); ok || n == x.from {
		return nil
	}
	if int64(len(x.keys)) != n-x.from || (len(x.keys) > 0 && x.keys[0].Index != x.from) {
		return fmt.Errorf("the replay applied %d entries from %d, not the %d to %d", len(x.keys), x.from, x.from, n)
	}
	return nil
}

// stateKeys are the keys an applied record keeps in the log's state
// index: its content key, and its kind unless it is an instruction (which
// changes nothing but the content keys).
func stateKeys(a *delegation.Applied) ledger.StateKeys {
	k := ledger.StateKeys{Content: a.Content}
	if a.Kind != schemas.KindInstruction {
		k.Mark = string(a.Kind)
	}
	return k
}
