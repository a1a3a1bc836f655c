package ledger

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"

	"golang.org/x/mod/sumdb/tlog"
)

// A log with a checkpoint history (the authority log) can keep, beside its
// entries, the index of a state its reader builds from them, so that a
// reader extends that state by the entries that are new instead of
// replaying the whole log (verify.LoadAuthority):
//
//   - for every entry, its content key (the SHA-256 of the signed
//     payload: what a duplicate is judged by) → its index;
//   - for every entry that changes the state (every kind but an
//     instruction), a mark: its index → its kind;
//   - the binding: the size and root hash of the tree the index covers.
//
// A gate's append writes the keys of its entries and moves the binding in
// the same durable transaction as the entries (StateKeys from Gate.Admit);
// a writer that does not keep the index (a replica's, an import's, a
// benchmark's) leaves the binding behind, and the next reader extends it
// (WriteState). The index is not part of the signed tree: OpenState proves
// the binding against the signed checkpoint, and the entries a reader
// replays are proven into it, but which entries are marked and which
// content keys are stored rests on the local disk, as the runner key does
// (LIMITATIONS.md); a full replay (ledger verify, audit) compares them.
const (
	prefixStateSeen = "s/d" // + the 32-byte content key → the entry's index (8 bytes)
	prefixStateMark = "s/m" // + the entry's index (8 bytes) → its kind
)

// keyState holds the binding: the size (8 bytes) and root hash (32).
var keyState = []byte("m/state")

// maxMarkKind bounds a mark's kind, in bytes.
const maxMarkKind = 32

// ErrStateMismatch is wrapped by every *StateMismatchError.
var ErrStateMismatch = errors.New("persisted state does not match the log")

// StateMismatchError says why a log's persisted state index cannot be
// used (OpenState, Marks): the reader rebuilds it by a full replay and
// says so, never uses it.
type StateMismatchError struct{ Reason string }

func (e *StateMismatchError) Error() string {
	return fmt.Sprintf("%v: %s", ErrStateMismatch, e.Reason)
}

// Unwrap returns ErrStateMismatch.
func (e *StateMismatchError) Unwrap() error { return ErrStateMismatch }

// StateKeys are what a state index keeps of one entry: its content key,
// and, for an entry that changes the state, its kind (Mark; "" for one
// that does not). A zero StateKeys keeps nothing.
type StateKeys struct {
	Content [32]byte
	Mark    string
}

// IndexedKeys are one entry's StateKeys with its index.
type IndexedKeys struct {
	Index int64
	StateKeys
}

// StateBinding is the tree a state index covers: its first Size entries,
// whose root hash is Root.
type StateBinding struct {
	Size int64
	Root tlog.Hash
}

// StateMark is a marked entry: its index and kind.
type StateMark struct {
	Index int64
	Kind  string
}

func seenKey(content [32]byte) []byte { return append([]byte(prefixStateSeen), content[:]...) }

func markKey(i int64) []byte {
	return binary.BigEndian.AppendUint64([]byte(prefixStateMark), uint64(i))
}

func bindingBytes(b StateBinding) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(b.Size)), b.Root[:]...)
}

// putStateKeys writes entry i's keys in txn.
func putStateKeys(txn Txn, i int64, k StateKeys) error {
	if k == (StateKeys{}) {
		return nil
	}
	if err := txn.Set(seenKey(k.Content), sizeBytes(i)); err != nil {
		return err
	}
	if k.Mark != "" {
		if len(k.Mark) > maxMarkKind {
			return fmt.Errorf("state mark of entry %d: kind of %d bytes, at most %d", i, len(k.Mark), maxMarkKind)
		}
		return txn.Set(markKey(i), []byte(k.Mark))
	}
	return nil
}

// stateBinding reads the binding in txn: false when none is stored; a
// malformed one is a *StateMismatchError.
func stateBinding(txn Txn) (StateBinding, bool, error) {
	v, err := txn.Get(keyState)
	if errors.Is(err, ErrNoKey) {
		return StateBinding{}, false, nil
	} else if err != nil {
		return StateBinding{}, false, err
	}
	if len(v) != 8+len(tlog.Hash{}) {
		return StateBinding{}, false, &StateMismatchError{Reason: fmt.Sprintf("the binding is %d bytes, not %d", len(v), 8+len(tlog.Hash{}))}
	}
	b := StateBinding{Size: int64(binary.BigEndian.Uint64(v[:8]))}
	copy(b.Root[:], v[8:])
	return b, true, nil
}

// StateBinding returns the binding of the log's state index, and false
// when the log keeps none (a log from before the index, or one whose
// index was dropped). It is not verified: OpenState proves it. A
// malformed binding is a *StateMismatchError.
func (l *Log) StateBinding() (StateBinding, bool, error) {
	var b StateBinding
	var ok bool
	err := l.db.View(func(txn Txn) error {
		var err error
		b, ok, err = stateBinding(txn)
		return err
	})
	return b, ok, err
}

// Seen returns the index of the entry whose content key is content, from
// the state index, and false when the index holds none. An index at or
// past the log's size, or a malformed value, is a *StateMismatchError.
func (l *Log) Seen(content [32]byte) (int64, bool, error) {
	var i int64
	found := false
	err := l.db.View(func(txn Txn) error {
		v, err := txn.Get(seenKey(content))
		if errors.Is(err, ErrNoKey) {
			return nil
		} else if err != nil {
			return err
		}
		if len(v) != 8 {
			return &StateMismatchError{Reason: fmt.Sprintf("content key %s: malformed index", hex.EncodeToString(content[:]))}
		}
		i, found = int64(binary.BigEndian.Uint64(v)), true
		return nil
	})
	if err == nil && found && (i < 0 || i >= l.Size()) {
		return 0, false, &StateMismatchError{Reason: fmt.Sprintf("content key %s points at entry %d, past the log (size %d)", hex.EncodeToString(content[:]), i, l.Size())}
	}
	return i, found, err
}

// Marks returns the marked entries below size, in index order. A
// malformed key or kind is a *StateMismatchError.
func (l *Log) Marks(size int64) ([]StateMark, error) {
	var out []StateMark
	err := l.db.View(func(txn Txn) error {
		it := txn.Iterate([]byte(prefixStateMark))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			k := it.Key()
			if len(k) != len(prefixStateMark)+8 {
				return &StateMismatchError{Reason: fmt.Sprintf("a mark key of %d bytes", len(k))}
			}
			i := int64(binary.BigEndian.Uint64(k[len(prefixStateMark):]))
			if i < 0 || i >= size {
				break
			}
			v, err := it.Value()
			if err != nil {
				return err
			}
			if len(v) == 0 || len(v) > maxMarkKind {
				return &StateMismatchError{Reason: fmt.Sprintf("the mark of entry %d: a kind of %d bytes", i, len(v))}
			}
			out = append(out, StateMark{Index: i, Kind: string(v)})
		}
		return nil
	})
	return out, err
}

// SeenKeys calls fn with every content key of the state index and the
// index it points to, in key order, until fn returns an error (which it
// returns). A malformed value is a *StateMismatchError. For comparing
// the index with a full replay.
func (l *Log) SeenKeys(fn func(content [32]byte, index int64) error) error {
	return l.db.View(func(txn Txn) error {
		it := txn.Iterate([]byte(prefixStateSeen))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			k := it.Key()
			v, err := it.Value()
			if err != nil {
				return err
			}
			if len(k) != len(prefixStateSeen)+32 || len(v) != 8 {
				return &StateMismatchError{Reason: fmt.Sprintf("a content key of %d bytes with a value of %d", len(k), len(v))}
			}
			var c [32]byte
			copy(c[:], k[len(prefixStateSeen):])
			if err := fn(c, int64(binary.BigEndian.Uint64(v))); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteState extends the state index by keys, those of the entries from
// from to b.Size as a reader that verified them built them, and then
// moves the binding to b, in durable transactions of at most
// maxLookupBatch entries: the binding last, so that a crash leaves it
// where it was (the keys written are facts about entries the log holds,
// and a later reader writes them again). The index must cover exactly
// the entries before from (its binding's size), or from is 0 (keys for
// the whole log); b must not pass the log's size. Errors: a
// *StateMismatchError for a binding elsewhere; Badger's.
func (l *Log) WriteState(from int64, keys iter.Seq[IndexedKeys], b StateBinding) error {
	if b.Size > l.Size() || from > b.Size {
		return fmt.Errorf("state binding at %d entries, extended from %d, past the log (size %d)", b.Size, from, l.Size())
	}
	if from > 0 {
		old, ok, err := l.StateBinding()
		if err != nil {
			return err
		}
		if !ok || old.Size != from {
			return &StateMismatchError{Reason: fmt.Sprintf("the keys extend the index from entry %d, and its binding is elsewhere", from)}
		}
	}
	buf := make([]IndexedKeys, 0, maxLookupBatch)
	flush := func() error {
		err := l.db.Update(func(txn Txn) error {
			for _, k := range buf {
				if err := putStateKeys(txn, k.Index, k.StateKeys); err != nil {
					return err
				}
			}
			return nil
		})
		buf = buf[:0]
		return err
	}
	for k := range keys {
		if buf = append(buf, k); len(buf) == cap(buf) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return l.db.Update(func(txn Txn) error { return txn.Set(keyState, bindingBytes(b)) })
}

// DropState removes the state index and its binding, before a reader
// that found it unusable writes it again from a full replay.
func (l *Log) DropState() error {
	if err := l.db.Update(func(txn Txn) error { return txn.Delete(keyState) }); err != nil {
		return err
	}
	for _, prefix := range []string{prefixStateSeen, prefixStateMark} {
		for {
			var keys [][]byte
			err := l.db.View(func(txn Txn) error {
				it := txn.Iterate([]byte(prefix))
				defer it.Close()
				for ; it.Valid() && len(keys) < maxLookupBatch; it.Next() {
					keys = append(keys, append([]byte(nil), it.Key()...))
				}
				return nil
			})
			if err != nil {
				return err
			}
			if len(keys) == 0 {
				break // this prefix is empty: on to the next
			}
			err = l.db.Update(func(txn Txn) error {
				for _, k := range keys {
					if err := txn.Delete(k); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// moveBinding moves the binding to b in txn when it covers exactly the
// entries before the batch (first) and a gate wrote the batch's keys. A
// binding behind stays where it is, for a reader to extend.
func (l *Log) moveBinding(txn Txn, first int64, b StateBinding) error {
	if l.gate == nil {
		return nil // no keys were written
	}
	old, ok, err := stateBinding(txn)
	if err != nil || !ok || old.Size != first {
		return nil // no usable index: nothing to move
	}
	return txn.Set(keyState, bindingBytes(b))
}
