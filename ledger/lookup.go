package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// prefixLookup starts the keys of EnqueueWithKeys: "x/" + the caller's key.
const prefixLookup = "x/"

// MaxLookupKey is the longest lookup key, in bytes.
const MaxLookupKey = 256

func lookupKey(k string) []byte { return []byte(prefixLookup + k) }

// EnqueueWithKeys appends one entry, as Append does, and in the same
// durable transaction points each of keys at it, so that Lookup finds the
// latest entry stored under a key without scanning the log (a runner's
// "has instruction X been admitted?"). The keys are an index beside the
// log, not part of the signed tree: a caller must read the entry they
// point to with VerifiedEntry and check it says what the key claims.
//
// It hands the entry to the committer and returns a function that waits
// until it is durable and returns its index (or the batch's error).
// Entries are committed in the order they were enqueued, so a caller that
// enqueues under its own lock fixes the log order without holding the
// lock through the fsync. Errors: ErrNoSigner, ErrEntrySize, ErrClosed,
// and a key that is empty or longer than MaxLookupKey.
func (l *Log) EnqueueWithKeys(entry []byte, keys []string) (func() (int64, error), error) {
	for _, k := range keys {
		if k == "" || len(k) > MaxLookupKey {
			return nil, fmt.Errorf("lookup key of %d bytes: allowed 1 to %d", len(k), MaxLookupKey)
		}
	}
	if l.signer == nil {
		return nil, ErrNoSigner
	}
	if len(entry) == 0 || len(entry) > MaxEntrySize {
		return nil, fmt.Errorf("%w: entry is %d bytes, allowed 1 to %d", ErrEntrySize, len(entry), MaxEntrySize)
	}
	req := &appendReq{entries: [][]byte{entry}, keys: keys, bytes: len(entry), done: make(chan struct{})}
	if err := l.enqueue(req); err != nil {
		return nil, err
	}
	return func() (int64, error) {
		<-req.done
		return req.first, req.err
	}, nil
}

// Lookup returns the index of the latest entry appended under key with
// EnqueueWithKeys, and false when there is none. The index is unverified
// (see EnqueueWithKeys); one at or past the log's size is an
// *IntegrityError.
func (l *Log) Lookup(key string) (int64, bool, error) {
	var i int64
	found := false
	err := l.db.View(func(txn Txn) error {
		v, err := txn.Get(lookupKey(key))
		if errors.Is(err, ErrNoKey) {
			return nil
		} else if err != nil {
			return err
		}
		if len(v) != 8 {
			return &IntegrityError{Index: -1, What: "lookup key " + key, Detail: "malformed index"}
		}
		i, found = int64(binary.BigEndian.Uint64(v)), true
		return nil
	})
	if err == nil && found && (i < 0 || i >= l.Size()) {
		return 0, false, &IntegrityError{Index: i, What: "lookup key " + key, Detail: fmt.Sprintf("points past the log (size %d)", l.Size())}
	}
	return i, found, err
}

// maxLookupBatch bounds the keys SetLookups writes per transaction.
const maxLookupBatch = 4096

// SetLookups points each key at an existing entry, as EnqueueWithKeys
// would have: for rebuilding the index of a log whose keys were not
// copied (an imported log) or not kept. Keys are written in the order of
// keys, in durable transactions of at most maxLookupBatch; a later pair
// with the same key wins. Errors: a key that is empty or longer than
// MaxLookupKey, an index outside the log, and Badger's.
func (l *Log) SetLookups(keys []LookupPair) error {
	for _, p := range keys {
		if p.Key == "" || len(p.Key) > MaxLookupKey {
			return fmt.Errorf("lookup key of %d bytes: allowed 1 to %d", len(p.Key), MaxLookupKey)
		}
		if p.Index < 0 || p.Index >= l.Size() {
			return fmt.Errorf("lookup key %s: index %d is outside the log (size %d)", p.Key, p.Index, l.Size())
		}
	}
	for len(keys) > 0 {
		n := min(len(keys), maxLookupBatch)
		err := l.db.Update(func(txn Txn) error {
			for _, p := range keys[:n] {
				if err := txn.Set(lookupKey(p.Key), sizeBytes(p.Index)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// LookupPair is one lookup key and the entry index it points to.
type LookupPair struct {
	Key   string
	Index int64
}
