package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

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
//   - the binding: the size and root hash of the tree the index covers,
//     and the digest of the marks below it (ChainMark), so that a mark
//     that is missing, added or changed (a damaged block, which Badger
//     reads as no key, or an edit that did not also rewrite the digest)
//     is found when the index is opened.
//
// A gate's append writes the keys of its entries and moves the binding in
// the same durable transaction as the entries (StateKeys from Gate.Admit);
// a writer that does not keep the index (a replica's, an import's, a
// benchmark's) leaves the binding behind, and the next reader extends it
// (stateview.Write). Package ledger/stateview reads, extends, checks and
// drops the index through ViewState and UpdateState. The index is not part of the signed tree: ledger/stateview proves
// the binding against the signed checkpoint, and the entries a reader
// replays are proven into it, but which entries are marked and which
// content keys are stored rests on the local disk, as the runner key does
// (LIMITATIONS.md); a full replay (ledger verify, audit) compares them.
const (
	StateSeenPrefix = "s/d" // + the 32-byte content key → the entry's index (8 bytes)
	StateMarkPrefix = "s/m" // + the entry's index (8 bytes) → its kind
)

// keyState holds the binding: the size (8 bytes), root hash (32) and
// marks digest (32).
var keyState = []byte("m/state")

// MaxMarkKind bounds a mark's kind, in bytes.
const MaxMarkKind = 32

// ErrStateMismatch is wrapped by every *StateMismatchError.
var ErrStateMismatch = errors.New("persisted state does not match the log")

// StateMismatchError says why a log's persisted state index cannot be
// used (stateview.Open, Marks): the reader rebuilds it by a full replay and
// says so, never uses it.
type StateMismatchError struct{ Reason string }

func (e *StateMismatchError) Error() string { return fmt.Sprintf("%v: %s", ErrStateMismatch, e.Reason) }

// Unwrap returns ErrStateMismatch.
func (e *StateMismatchError) Unwrap() error { return ErrStateMismatch }

// StateKeys are what a state index keeps of one entry: its content key,
// and, for an entry that changes the state, its kind (Mark; "" for one
// that does not). A zero StateKeys keeps nothing.
type StateKeys struct {
	Content [32]byte
	Mark    string
}

// StateBinding is the tree a state index covers: its first Size entries,
// whose root hash is Root; Marks is the digest of the index's marks below
// Size (ChainMark over them in index order from the zero hash), which
// stateview.Index.Write computes.
type StateBinding struct {
	Size  int64
	Root  tlog.Hash
	Marks tlog.Hash
}

// ChainMark returns the marks digest d extended by entry i's mark kind:
// SHA-256(d || i as 8 bytes big-endian || kind).
func ChainMark(d tlog.Hash, i int64, kind string) tlog.Hash {
	return sha256.Sum256(append(binary.BigEndian.AppendUint64(d[:], uint64(i)), kind...))
}

// StateSeenKey is the key of content's entry in the state index.
func StateSeenKey(content [32]byte) []byte { return append([]byte(StateSeenPrefix), content[:]...) }

// StateMarkKey is the key of entry i's mark in the state index.
func StateMarkKey(i int64) []byte {
	return binary.BigEndian.AppendUint64([]byte(StateMarkPrefix), uint64(i))
}

func bindingBytes(b StateBinding) []byte {
	return append(append(binary.BigEndian.AppendUint64(nil, uint64(b.Size)), b.Root[:]...), b.Marks[:]...)
}

// putStateKeys writes entry i's keys in txn.
func putStateKeys(txn Txn, i int64, k StateKeys) error {
	if k == (StateKeys{}) {
		return nil
	}
	if err := txn.Set(StateSeenKey(k.Content), sizeBytes(i)); err != nil {
		return err
	}
	if k.Mark != "" {
		if len(k.Mark) > MaxMarkKind {
			return fmt.Errorf("state mark of entry %d: kind of %d bytes, at most %d", i, len(k.Mark), MaxMarkKind)
		}
		return txn.Set(StateMarkKey(i), []byte(k.Mark))
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
	if len(v) != 8+2*len(tlog.Hash{}) {
		return StateBinding{}, false, &StateMismatchError{Reason: fmt.Sprintf("the binding is %d bytes, not %d (a binding of 40 is an older writ's)", len(v), 8+2*len(tlog.Hash{}))}
	}
	b := StateBinding{Size: int64(binary.BigEndian.Uint64(v[:8]))}
	copy(b.Root[:], v[8:40])
	copy(b.Marks[:], v[40:])
	return b, true, nil
}

// moveBinding moves the binding to b in txn, its marks digest extended
// by the batch's marks (reqs' StateKeys), when it covers exactly the
// entries before the batch (first) and a gate wrote the batch's keys. A
// binding behind stays where it is, for a reader to extend.
func (l *Log) moveBinding(txn Txn, first int64, b StateBinding, reqs []*appendReq) error {
	if l.gate == nil {
		return nil // no keys were written
	}
	old, ok, err := stateBinding(txn)
	if err != nil || !ok || old.Size != first {
		return nil // no usable index: nothing to move
	}
	b.Marks = old.Marks
	for _, req := range reqs {
		for j, k := range req.state {
			if k.Mark != "" {
				b.Marks = ChainMark(b.Marks, req.first+int64(j), k.Mark)
			}
		}
	}
	return txn.Set(keyState, bindingBytes(b))
}

// StateTxn is a transaction on a log's state index only: its content
// keys (StateSeenPrefix), marks (StateMarkPrefix) and binding. Every
// other key is refused, so that a reader of the index can change
// nothing else of the log.
type StateTxn struct {
	txn   Txn
	write bool
}

// ViewState runs fn in a read transaction on the state index.
func (l *Log) ViewState(fn func(StateTxn) error) error {
	return l.db.View(func(txn Txn) error { return fn(StateTxn{txn: txn}) })
}

// UpdateState runs fn in a durable writing transaction on the state
// index, committed when fn returns nil.
func (l *Log) UpdateState(fn func(StateTxn) error) error {
	return l.db.Update(func(txn Txn) error { return fn(StateTxn{txn: txn, write: true}) })
}

// inState refuses a key outside the state index.
func inState(key []byte, write bool, t StateTxn) error {
	if write && !t.write {
		return errors.New("state index: a write in a read transaction")
	}
	if !bytes.HasPrefix(key, []byte("s/")) && !bytes.Equal(key, keyState) {
		return fmt.Errorf("state index: key %q is not the index's", key)
	}
	return nil
}

// Get returns the value at key (an error wrapping ErrNoKey when none).
func (t StateTxn) Get(key []byte) ([]byte, error) {
	if err := inState(key, false, t); err != nil {
		return nil, err
	}
	return t.txn.Get(key)
}

// Iterate walks the index's keys under prefix (which must be the
// index's).
func (t StateTxn) Iterate(prefix []byte) (Iterator, error) {
	if err := inState(prefix, false, t); err != nil {
		return nil, err
	}
	return t.txn.Iterate(prefix), nil
}

// Put writes entry i's keys.
func (t StateTxn) Put(i int64, k StateKeys) error {
	if !t.write {
		return errors.New("state index: a write in a read transaction")
	}
	return putStateKeys(t.txn, i, k)
}

// Bind moves the binding to b.
func (t StateTxn) Bind(b StateBinding) error {
	if !t.write {
		return errors.New("state index: a write in a read transaction")
	}
	return t.txn.Set(keyState, bindingBytes(b))
}

// Binding returns the binding, false when the log keeps none (from
// before the index, or dropped); not verified (stateview.Open proves
// it). A malformed binding is a *StateMismatchError.
func (t StateTxn) Binding() (StateBinding, bool, error) { return stateBinding(t.txn) }

// Unbind removes the binding: the index covers nothing until Bind.
func (t StateTxn) Unbind() error {
	if !t.write {
		return errors.New("state index: a write in a read transaction")
	}
	return t.txn.Delete(keyState)
}

// Delete removes key from the index.
func (t StateTxn) Delete(key []byte) error {
	if err := inState(key, true, t); err != nil {
		return err
	}
	return t.txn.Delete(key)
}
