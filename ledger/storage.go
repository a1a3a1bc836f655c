package ledger

import (
	"errors"
)

// A Log keeps its entries, tree hashes, checkpoints and metadata in a
// Store: an ordered key-value store with transactions. Badger v4 is the
// one backend today (store_badger.go: openBadger, with the checks
// that keep Badger from destroying evidence). A new backend, for
// instance one on an existing distributed engine such as
// transparency-dev/tessera's drivers, implements Store, Txn and Iterator;
// nothing else in the ledger, and none of the formats (checkpoints,
// proofs, receipts, tiles and bundles: ledger/tiles and the note and
// proof code, which do not import Badger), changes. The key layout is the
// ledger's (log.go, history.go, lookup.go).

// Store is the storage of one log.
type Store interface {
	// View runs fn in a read-only transaction: a consistent snapshot.
	View(fn func(Txn) error) error
	// Update runs fn in a writing transaction and commits it durably
	// (synced to stable storage) when fn returns nil, else discards it.
	Update(fn func(Txn) error) error
	// Begin starts a writing transaction that the caller commits or
	// discards.
	Begin() Txn
	// Close releases the store; a Store is not used afterwards.
	Close() error
}

// Txn is one transaction. Reads see the snapshot the transaction
// started from and its own writes. Commit makes every write durable at
// once, or none of them (ErrTxnFull: more than one transaction holds;
// nothing written).
type Txn interface {
	// Get returns a copy of the value at key, or an error wrapping
	// ErrNoKey.
	Get(key []byte) ([]byte, error)
	Set(key, value []byte) error
	Delete(key []byte) error
	// Iterate walks the keys that start with prefix, in byte order,
	// positioned at the first of them (Seek moves it).
	Iterate(prefix []byte) Iterator
	Commit() error
	Discard()
}

// Iterator walks keys in byte order within a prefix.
type Iterator interface {
	Seek(key []byte) // to the first key >= key
	Valid() bool
	Next()
	Key() []byte            // valid until Next
	Value() ([]byte, error) // valid until Next
	Close()
}

// Store errors a backend returns (wrapped).
var (
	// ErrNoKey: no value at that key.
	ErrNoKey = errors.New("no such key")
	// ErrTxnFull: the transaction cannot take more writes.
	ErrTxnFull = errors.New("transaction full")
)
