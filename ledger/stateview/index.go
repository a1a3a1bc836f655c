package stateview

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"

	"github.com/writ-ledger/writ/ledger"
)

// Index is an authority log's state index (ledger/state.go), read,
// extended, checked and dropped through the log's state transactions
// (ledger.Log.ViewState, UpdateState). Nothing it reads is trusted until
// Open proved the binding; the content keys and marks rest on the local
// disk (LIMITATIONS.md).
type Index struct{ l *ledger.Log }

// NewIndex returns the state index of l.
func NewIndex(l *ledger.Log) Index { return Index{l} }

// IndexedKeys are one entry's keys with its index.
type IndexedKeys struct {
	Index int64
	ledger.StateKeys
}

// Mark is a marked entry: its index and kind.
type Mark struct {
	Index int64
	Kind  string
}

// maxDrop bounds the keys Drop deletes per transaction, and Write's keys
// per transaction.
const maxDrop = 4096

// Binding returns the index's binding, and false when the log keeps
// none (ledger.StateTxn.Binding): not verified (Open proves it).
func (x Index) Binding() (b ledger.StateBinding, ok bool, err error) {
	err = x.l.ViewState(func(t ledger.StateTxn) error {
		b, ok, err = t.Binding()
		return err
	})
	return b, ok, err
}

// Seen returns the index of the entry whose content key is content, and
// false when the index holds none: delegation.Seen, for a state extended
// from this one. An index at or past the log's size, or a malformed
// value, is a *ledger.StateMismatchError.
func (x Index) Seen(content [32]byte) (int64, bool, error) {
	var i int64
	found := false
	err := x.l.ViewState(func(t ledger.StateTxn) error {
		v, err := t.Get(ledger.StateSeenKey(content))
		if errors.Is(err, ledger.ErrNoKey) {
			return nil
		} else if err != nil {
			return err
		}
		if len(v) != 8 {
			return &ledger.StateMismatchError{Reason: fmt.Sprintf("content key %s: malformed index", hex.EncodeToString(content[:]))}
		}
		i, found = int64(binary.BigEndian.Uint64(v)), true
		return nil
	})
	if size := x.l.Size(); err == nil && found && (i < 0 || i >= size) {
		return 0, false, &ledger.StateMismatchError{Reason: fmt.Sprintf("content key %s points at entry %d, past the log (size %d)", hex.EncodeToString(content[:]), i, size)}
	}
	return i, found, err
}

// Marks returns the marked entries below size, in index order. A
// malformed key or kind is a *ledger.StateMismatchError.
func (x Index) Marks(size int64) ([]Mark, error) {
	var out []Mark
	err := x.scan(ledger.StateMarkPrefix, func(k, v []byte) (bool, error) {
		if len(k) != len(ledger.StateMarkPrefix)+8 {
			return false, &ledger.StateMismatchError{Reason: fmt.Sprintf("a mark key of %d bytes", len(k))}
		}
		i := int64(binary.BigEndian.Uint64(k[len(ledger.StateMarkPrefix):]))
		if i < 0 || i >= size {
			return false, nil
		}
		if len(v) == 0 || len(v) > ledger.MaxMarkKind {
			return false, &ledger.StateMismatchError{Reason: fmt.Sprintf("the mark of entry %d: a kind of %d bytes", i, len(v))}
		}
		out = append(out, Mark{Index: i, Kind: string(v)})
		return true, nil
	})
	return out, err
}

// SeenKeys calls fn with every content key of the index and the entry it
// points to, in key order, until fn returns an error (which it returns).
// A malformed key or value is a *ledger.StateMismatchError. For comparing
// the index with a full replay.
func (x Index) SeenKeys(fn func(content [32]byte, index int64) error) error {
	return x.scan(ledger.StateSeenPrefix, func(k, v []byte) (bool, error) {
		if len(k) != len(ledger.StateSeenPrefix)+32 || len(v) != 8 {
			return false, &ledger.StateMismatchError{Reason: fmt.Sprintf("a content key of %d bytes with a value of %d", len(k), len(v))}
		}
		var c [32]byte
		copy(c[:], k[len(ledger.StateSeenPrefix):])
		return true, fn(c, int64(binary.BigEndian.Uint64(v)))
	})
}

// scan calls fn with each key and value under prefix, in one read
// transaction, while it returns true and no error.
func (x Index) scan(prefix string, fn func(k, v []byte) (bool, error)) error {
	return x.scanFrom(prefix, nil, fn)
}

// scanFrom is scan from the first key after after (nil: from the
// prefix's first).
func (x Index) scanFrom(prefix string, after []byte, fn func(k, v []byte) (bool, error)) error {
	return x.l.ViewState(func(t ledger.StateTxn) error {
		it, err := t.Iterate([]byte(prefix))
		if err != nil {
			return err
		}
		defer it.Close()
		if after != nil {
			it.Seek(after)
			if it.Valid() && bytes.Equal(it.Key(), after) {
				it.Next()
			}
		}
		for ; it.Valid(); it.Next() {
			v, err := it.Value()
			if err != nil {
				return err
			}
			if more, err := fn(it.Key(), v); err != nil || !more {
				return err
			}
		}
		return nil
	})
}

// Write extends the index by keys, those of the entries from from to
// b.Size as a reader that verified them built them, and then moves the
// binding to b, its marks digest (b.Marks, which Write sets) the old
// binding's extended by the marks written (ledger.ChainMark), in durable
// transactions of at most maxDrop entries: the
// binding last, so that a crash leaves it where it was (the keys written
// are facts about entries the log holds, and a later reader writes them
// again). The index must cover exactly the entries before from (its
// binding's size), or from is 0 (keys for the whole log); b must not pass
// the log's size. Errors: a *ledger.StateMismatchError for a binding
// elsewhere; Badger's.
func (x Index) Write(from int64, keys iter.Seq[IndexedKeys], b ledger.StateBinding) error {
	if b.Size > x.l.Size() || from > b.Size {
		return fmt.Errorf("state binding at %d entries, extended from %d, past the log (size %d)", b.Size, from, x.l.Size())
	}
	var marks ledger.StateBinding // marks.Marks: the digest of the marks below from
	if from > 0 {
		old, ok, err := x.Binding()
		if err != nil {
			return err
		}
		if !ok || old.Size != from {
			return &ledger.StateMismatchError{Reason: fmt.Sprintf("the keys extend the index from entry %d, and its binding is elsewhere", from)}
		}
		marks = old
	}
	buf := make([]IndexedKeys, 0, maxDrop)
	flush := func() error {
		err := x.l.UpdateState(func(t ledger.StateTxn) error {
			for _, k := range buf {
				if err := t.Put(k.Index, k.StateKeys); err != nil {
					return err
				}
			}
			return nil
		})
		buf = buf[:0]
		return err
	}
	for k := range keys {
		if k.Mark != "" {
			marks.Marks = ledger.ChainMark(marks.Marks, k.Index, k.Mark)
		}
		if buf = append(buf, k); len(buf) == cap(buf) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	b.Marks = marks.Marks
	return x.l.UpdateState(func(t ledger.StateTxn) error { return t.Bind(b) })
}

// Drop removes the index and its binding (the binding first), before a
// reader that found it unusable writes it again from a full replay.
func (x Index) Drop() error {
	if err := x.l.UpdateState(func(t ledger.StateTxn) error { return t.Unbind() }); err != nil {
		return err
	}
	for _, prefix := range []string{ledger.StateSeenPrefix, ledger.StateMarkPrefix} {
		// Each round starts after the last key the one before deleted:
		// from the prefix's first key, every round would walk past the
		// deletions before it (quadratic in the index's size).
		var after []byte
		for {
			var keys [][]byte
			err := x.scanFrom(prefix, after, func(k, _ []byte) (bool, error) {
				keys = append(keys, append([]byte(nil), k...))
				return len(keys) < maxDrop, nil
			})
			if err != nil || len(keys) == 0 {
				if err != nil {
					return err
				}
				break
			}
			after = keys[len(keys)-1]
			err = x.l.UpdateState(func(t ledger.StateTxn) error {
				for _, k := range keys {
					if err := t.Delete(k); err != nil {
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
