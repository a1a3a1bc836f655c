package badgerfile

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/ristretto/v2/z"
)

// bulkBuffer is how many bytes of keys and values Bulk hands Badger's
// StreamWriter at a time.
const bulkBuffer = 4 << 20

// bulkHeaderKeys bounds the keys a store may hold when a Bulk starts: a
// new log's header (origin, key, size, ...), never entries.
const bulkHeaderKeys = 64

// ErrBulkOrder is Bulk.Set's refusal of a key that is not after the last
// key set with the same first byte.
var ErrBulkOrder = errors.New("bulk load: keys out of order")

// Bulk loads a new store through Badger's StreamWriter: the keys go
// straight into sorted tables at the store's last level, with no
// write-ahead log, memtable, flush or compaction (a first sync of a
// million records wrote its entries and tree hashes in a quarter of the
// time transactions took, and left nothing to compact). Keys are grouped
// into streams by their first byte (a log's key families: entries,
// hashes, history checkpoints, metadata), and within a family they must
// come in increasing order (ErrBulkOrder): Badger requires each stream
// sorted and the streams' key ranges disjoint. Nothing is readable, or
// durable, before Flush; after it the store is an ordinary one again.
//
// NewBulk empties the store first (StreamWriter.Prepare), after reading
// what it held (at most 64 keys: a new log's header), and sets that
// again: only for a store that is removed when the load does not finish
// (a replica being created beside its final place). Not safe for
// concurrent use.
type Bulk struct {
	sw      *badger.StreamWriter
	buf     *z.Buffer
	last    map[byte][]byte
	pending int
	written *Written
}

// NewBulk starts a bulk load of db (at dir), counting what it sets in
// written (so that the mapped pages of the tables it writes are
// released as it goes, and its close compacts what transactions add to
// level 0 after it: Close). Errors: a store holding more than 64 keys;
// Badger's, reading or emptying it.
func NewBulk(db *badger.DB, dir string, written *Written) (*Bulk, error) {
	var header [][2][]byte
	err := db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if len(header) == bulkHeaderKeys {
				return fmt.Errorf("bulk load: the store at %s holds more than %d keys: not a new log", dir, bulkHeaderKeys)
			}
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			header = append(header, [2][]byte{it.Item().KeyCopy(nil), v})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	written.bulk.Store(true)
	b := &Bulk{sw: db.NewStreamWriter(), buf: z.NewBuffer(bulkBuffer, "writ.Bulk"), last: map[byte][]byte{}, written: written}
	if err := b.sw.Prepare(); err != nil {
		b.Cancel()
		return nil, err
	}
	for _, kv := range header {
		if err := b.Set(kv[0], kv[1]); err != nil {
			b.Cancel()
			return nil, err
		}
	}
	return b, nil
}

// Set adds key with value. Errors: an empty key, ErrBulkOrder, Badger's
// (which end the load: Cancel it).
func (b *Bulk) Set(key, value []byte) error {
	if len(key) == 0 {
		return errors.New("bulk load: an empty key")
	}
	last, ok := b.last[key[0]]
	if ok && bytes.Compare(key, last) <= 0 {
		return fmt.Errorf("%w: key %x after %x", ErrBulkOrder, key, last)
	}
	b.last[key[0]] = append(last[:0], key...)
	// Every key at version 1: a new store holds one version of each, and
	// transactions after Flush write above the highest (Badger's oracle).
	badger.KVToBuffer(&pb.KV{Key: key, Value: value, Version: 1, StreamId: uint32(key[0]) + 1}, b.buf)
	b.pending += len(key) + len(value)
	if b.pending >= bulkBuffer {
		return b.write()
	}
	return nil
}

// write hands the buffered keys to the StreamWriter and counts them
// (Written.Committed releases the mapped pages of the tables written).
func (b *Bulk) write() error {
	if b.pending == 0 {
		return nil
	}
	err := b.sw.Write(b.buf)
	b.buf.Reset()
	b.written.Add(b.pending)
	b.written.Committed()
	b.pending = 0
	return err
}

// Flush writes what is buffered and makes the load durable and readable.
// Errors: Badger's. The Bulk is done either way.
func (b *Bulk) Flush() error {
	defer b.buf.Release()
	if err := b.write(); err != nil {
		b.sw.Cancel()
		return err
	}
	return b.sw.Flush()
}

// Cancel ends the load without flushing: the store holds nothing that can
// be relied on, and its owner removes it.
func (b *Bulk) Cancel() {
	b.sw.Cancel()
	b.buf.Release()
}
