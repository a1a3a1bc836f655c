package verify

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/stateview"
	"github.com/writ-ledger/writ/schemas"
)

// ErrStateDiverged is wrapped by every *StateDivergenceError. It wraps
// ledger.ErrTampered: the directory's persisted state is not what its log
// builds.
var ErrStateDiverged = fmt.Errorf("%w: the persisted authority state is not the one the log builds", ledger.ErrTampered)

// StateDivergenceError is the first item in which an authority log's
// persisted state index (ledger/state.go) differs from what a full replay
// of the log builds: Item names it (an entry's mark, a content key, the
// binding), Persisted and Replayed say what each has there.
type StateDivergenceError struct {
	Item                string
	Persisted, Replayed string
}

func (e *StateDivergenceError) Error() string {
	return fmt.Sprintf("%v: %s: the persisted state has %s, the replay %s", ErrStateDiverged, e.Item, e.Persisted, e.Replayed)
}

// Unwrap returns ErrStateDiverged.
func (e *StateDivergenceError) Unwrap() error { return ErrStateDiverged }

// StateMarks collects the marked entries (every kind but an instruction)
// a full replay applies, for CheckStateIndex; Applied is the replay's
// applied callback, then (optionally) next.
type StateMarks struct {
	Marks []stateview.Mark
	Next  func(*delegation.Applied)
}

// Applied records a when it changed the state, then calls m.Next.
func (m *StateMarks) Applied(a *delegation.Applied) {
	if a.Kind != schemas.KindInstruction {
		m.Marks = append(m.Marks, stateview.Mark{Index: a.Index, Kind: string(a.Kind)})
	}
	if m.Next != nil {
		m.Next(a)
	}
}

// CheckStateIndex compares the state index l persisted with st, the state
// a full replay of every entry of l built (delegation.NewState, so that
// it holds every content key), and marks, the entries that replay marked
// (StateMarks): the binding must be a prefix of the replayed tree (its
// root the stored tree's at its size, which the replay verified), every
// entry below it marked exactly when the replay marked it, with the same
// kind, and every content key the index holds the one of the entry it
// points to, one for every entry below the binding. A log without an
// index, or whose binding does not verify, is not compared (it is never
// used: the next act rebuilds it). The first difference is a
// *StateDivergenceError (ErrStateDiverged, ledger.ErrTampered). Memory:
// one bit per entry below the binding.
func CheckStateIndex(l *ledger.Log, st *delegation.State, marks []stateview.Mark) error {
	b, ok, err := stateview.NewIndex(l).Binding()
	var me *ledger.StateMismatchError
	switch {
	case errors.As(err, &me):
		return nil // never used: the next act rebuilds it
	case err != nil:
		return err
	case !ok || b.Size > st.Size():
		return nil
	}
	root, err := l.TreeHash(b.Size)
	if err != nil {
		return err
	}
	if root != b.Root {
		return nil // not a prefix of the log: never used either
	}
	stored, err := stateview.NewIndex(l).Marks(b.Size)
	if errors.As(err, &me) {
		return &StateDivergenceError{Item: "the marks", Persisted: me.Reason, Replayed: "well-formed marks"}
	} else if err != nil {
		return err
	}
	if err := compareMarks(stored, marks, b.Size); err != nil {
		return err
	}
	return compareContent(l, st, b.Size)
}

// compareMarks names the first entry below n whose mark differs.
func compareMarks(stored, replayed []stateview.Mark, n int64) error {
	for len(replayed) > 0 && replayed[len(replayed)-1].Index >= n {
		replayed = replayed[:len(replayed)-1]
	}
	for i := 0; i < len(stored) || i < len(replayed); i++ {
		var s, r stateview.Mark
		if i < len(stored) {
			s = stored[i]
		}
		if i < len(replayed) {
			r = replayed[i]
		}
		switch {
		case i < len(stored) && i < len(replayed) && s == r:
			continue
		case i >= len(stored) || (i < len(replayed) && r.Index < s.Index):
			return &StateDivergenceError{Item: fmt.Sprintf("entry %d", r.Index), Persisted: "no mark (an instruction)", Replayed: aRecord(r.Kind)}
		case i >= len(replayed) || s.Index < r.Index:
			return &StateDivergenceError{Item: fmt.Sprintf("entry %d", s.Index), Persisted: "a mark as " + aRecord(s.Kind), Replayed: "an instruction"}
		default:
			return &StateDivergenceError{Item: fmt.Sprintf("entry %d", s.Index), Persisted: "a mark as " + aRecord(s.Kind), Replayed: aRecord(r.Kind)}
		}
	}
	return nil
}

// compareContent checks every content key of l's index against st's, and
// that every entry below n has one.
func compareContent(l *ledger.Log, st *delegation.State, n int64) error {
	have := make([]uint64, (n+63)/64)
	err := stateview.NewIndex(l).SeenKeys(func(c [32]byte, i int64) error {
		want, ok := st.ContentKey(i)
		switch {
		case !ok:
			return &StateDivergenceError{Item: "content key " + hex.EncodeToString(c[:]), Persisted: fmt.Sprintf("entry %d", i), Replayed: "no such entry"}
		case want != c:
			return &StateDivergenceError{Item: "content key " + hex.EncodeToString(c[:]), Persisted: fmt.Sprintf("entry %d", i), Replayed: fmt.Sprintf("entry %d's content key %s", i, hex.EncodeToString(want[:]))}
		case i < n:
			have[i/64] |= 1 << (i % 64)
		}
		return nil
	})
	var me *ledger.StateMismatchError
	if errors.As(err, &me) {
		return &StateDivergenceError{Item: "the content keys", Persisted: me.Reason, Replayed: "well-formed keys"}
	} else if err != nil {
		return err
	}
	for i := int64(0); i < n; i++ {
		if have[i/64]&(1<<(i%64)) == 0 {
			c, _ := st.ContentKey(i)
			return &StateDivergenceError{Item: fmt.Sprintf("entry %d", i), Persisted: "no content key", Replayed: "content key " + hex.EncodeToString(c[:])}
		}
	}
	return nil
}

// aRecord is "a KIND record", or "an KIND record" before a vowel.
func aRecord(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind + " record"
	}
	return "a " + kind + " record"
}
