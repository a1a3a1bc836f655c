package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/internal/badgerfile"
	"github.com/writ-ledger/writ/ledger/internal/merkle"
	"golang.org/x/mod/sumdb/tlog"
)

// The replica writer: package ledger/replica (Import, Sync) grows a
// replica, a log without its signing key, with entries and checkpoints
// it has verified against the log's signed checkpoint. These are the
// only writes to a log other than Log.Append.

// ReplicaWriter appends entries to a replica log after its last one, in
// batches of about MaxBatchBytes/2, each one durable Badger transaction
// holding its entries, their tree hashes and the new size (never a
// checkpoint: entries past the signed checkpoint are unsigned until
// Finish, and DropUnsigned removes what a killed writer left). Finish
// stores the signed checkpoint with the last batch; Abort removes every
// entry the writer stored. A bulk writer (NewBulkReplicaWriter) has no
// batches. One writer at a time per Log; not safe for concurrent use.
type ReplicaWriter struct {
	l       *Log
	before  int64 // the log's size when the writer started
	n       int64 // entries the log holds with those written
	txn     Txn   // the open batch
	tree    TreeBuilder
	pending int              // bytes in the open batch, roughly
	bulk    *badgerfile.Bulk // a new replica's bulk load, until HashReader or Finish flushes it
}

// NewReplicaWriter starts a writer after the log's last entry, with the
// tree's compact range read from the stored hashes.
func (l *Log) NewReplicaWriter() (*ReplicaWriter, error) {
	before := l.Size()
	txn := l.db.Begin()
	tree, err := l.compactRange(txn, before)
	if err != nil {
		txn.Discard()
		return nil, err
	}
	return &ReplicaWriter{l: l, before: before, n: before, txn: txn, tree: tree}, nil
}

// NewBulkReplicaWriter is NewReplicaWriter for a replica that holds no
// entry and is removed unless the writer finishes (a first sync, written
// beside the replica's final place): the entries, their tree hashes and
// the history checkpoints go straight into sorted tables at the store's
// last level (badgerfile.Bulk), with no transaction, flush or compaction,
// and are durable and readable once HashReader or Finish flushes them.
// Abort leaves the store empty, its header included. On a log that holds
// entries, or another store, it is NewReplicaWriter.
func (l *Log) NewBulkReplicaWriter() (*ReplicaWriter, error) {
	w, err := l.NewReplicaWriter()
	s, ok := l.db.(badgerStore)
	if err != nil || !ok || w.before != 0 {
		return w, err
	}
	if w.bulk, err = badgerfile.NewBulk(s.db, s.dir, s.written); err != nil {
		w.txn.Discard()
		return nil, err
	}
	return w, nil
}

// endBulk flushes a bulk load; the writer goes on with transactions.
func (w *ReplicaWriter) endBulk() error {
	b := w.bulk
	if b == nil {
		return nil
	}
	w.bulk = nil
	if err := b.Flush(); err != nil {
		return err
	}
	w.txn.Discard()
	w.txn = w.l.db.Begin()
	return nil
}

// BulkSeen puts content keys of the state index (StateSeenKey: a
// content key → the index of the entry holding it, below Size()) into a
// new replica's bulk load, in increasing key order, and reports whether
// it did: false, with nothing written, for a writer that is not bulk
// loading (or once HashReader or Finish flushed the load). The keys stay
// untrusted until a binding is stored over them (stateview.Index.Write).
// Errors: an index past the entries written; a key not after the last
// (badgerfile.ErrBulkOrder); Badger's. After an error the caller aborts.
func (w *ReplicaWriter) BulkSeen(keys iter.Seq2[[32]byte, int64]) (bool, error) {
	if w.bulk == nil {
		return false, nil
	}
	for c, i := range keys {
		if i < 0 || i >= w.n {
			return false, fmt.Errorf("state index: content key of entry %d, past the %d entries written", i, w.n)
		}
		if err := w.bulk.Set(StateSeenKey(c), sizeBytes(i)); err != nil {
			return false, err
		}
	}
	return true, nil
}

// Size returns how many entries the log holds with those written so far.
func (w *ReplicaWriter) Size() int64 { return w.n }

// Root returns the root of the tree of the first Size() entries.
func (w *ReplicaWriter) Root() tlog.Hash { return w.tree.Root() }

// HashReader reads the stored hashes of the tree of the first Size()
// entries, those of the open batch included.
func (w *ReplicaWriter) HashReader() tlog.HashReader {
	if err := w.endBulk(); err != nil {
		return tlog.HashReaderFunc(func([]int64) ([]tlog.Hash, error) { return nil, err })
	}
	return txnHashReader(w.txn)
}

// Append writes e as entry Size() (at most MaxEntrySize bytes, not
// checked here: the caller verified it), first committing the open
// batch once it holds about MaxBatchBytes/2 bytes (so that a history
// checkpoint set after an entry goes in that entry's batch).
func (w *ReplicaWriter) Append(e []byte) error {
	if w.bulk != nil {
		w.n++
		return putEntry(w.bulk, w.n-1, e, w.tree.Add(tlog.RecordHash(e)))
	}
	if w.pending >= MaxBatchBytes/2 {
		if err := w.txn.Set(keySize, sizeBytes(w.n)); err != nil {
			return batchErr(err)
		}
		if err := batchErr(w.txn.Commit()); err != nil {
			return err
		}
		w.l.size.Store(w.n)
		w.txn, w.pending = w.l.db.Begin(), 0
	}
	if err := putEntry(w.txn, w.n, e, w.tree.Add(tlog.RecordHash(e))); err != nil {
		return err
	}
	w.n++
	w.pending += len(e) + 64
	return nil
}

// SetHistory stores signed, verified by the caller, as the history
// checkpoint of the batch that ends at entry size-1, in the open batch.
func (w *ReplicaWriter) SetHistory(size int64, signed []byte) error {
	if w.bulk != nil {
		return w.bulk.Set(historyKey(size), signed)
	}
	return batchErr(w.txn.Set(historyKey(size), signed))
}

// Finish stores signed (the log key's checkpoint, verified by the
// caller) and full (the same with witness cosignatures) as the log's
// latest checkpoint and commits the last batch. cp is signed's body: its
// size must be Size() and its root Root(), else nothing more is stored
// and the caller aborts.
func (w *ReplicaWriter) Finish(cp formats.Checkpoint, signed, full []byte) error {
	if cp.Size != w.n || cp.Hash != w.tree.Root() {
		return fmt.Errorf("the checkpoint of size %d does not sign the %d entries written", cp.Size, w.n)
	}
	if err := w.endBulk(); err != nil {
		return err
	}
	if err := w.txn.Set(keySize, sizeBytes(w.n)); err != nil {
		return batchErr(err)
	}
	if err := w.txn.Set(keyCheckpoint, signed); err != nil {
		return batchErr(err)
	}
	if err := setCosigned(w.txn, signed, full); err != nil {
		return err
	}
	if err := batchErr(w.txn.Commit()); err != nil {
		return err
	}
	w.txn.Discard()
	w.l.size.Store(w.n)
	w.l.head = nil // the committer reads and verifies the new head
	return nil
}

// Abort discards the open batch and removes every entry the writer
// committed, with the tree hashes and history checkpoints past them: the
// log is left as it was when the writer started.
func (w *ReplicaWriter) Abort() error {
	w.txn.Discard()
	if w.bulk != nil {
		w.bulk.Cancel()
		return nil
	}
	return w.l.truncateTo(w.before)
}

// compactRange returns a TreeBuilder holding the roots of the complete
// subtrees of the first n entries, read from the stored hashes.
func (l *Log) compactRange(txn Txn, n int64) (TreeBuilder, error) {
	var roots []tlog.Hash
	r := txnHashReader(txn)
	start := int64(0)
	for k := 62; k >= 0; k-- {
		if n&(1<<k) == 0 {
			continue
		}
		h, err := r.ReadHashes([]int64{tlog.StoredHashIndex(k, start>>k)})
		if err != nil {
			return TreeBuilder{}, err
		}
		roots = append(roots, h[0])
		start += 1 << k
	}
	return merkle.Resume(n, roots), nil
}

// CreateReplica creates an empty replica log at dir (which must not hold
// a store): a log of origin whose checkpoints verify under vkey, with a
// checkpoint history when history is set (an authority log), and no
// signing key, so that only a ReplicaWriter grows it. It returns the
// log open for writing.
func CreateReplica(dir, origin, vkey string, history bool) (*Log, error) {
	db, err := openBadger(dir, false)
	if err != nil {
		return nil, err
	}
	err = db.Update(func(txn Txn) error {
		meta := map[string][]byte{string(keyOrigin): []byte(origin), string(keyVKey): []byte(vkey), string(keySize): make([]byte, 8)}
		if history {
			meta[string(keyHistoryFlag)] = []byte{1}
			meta[string(keyState)] = bindingBytes(StateBinding{Size: 0, Root: emptyRoot})
		}
		for k, v := range meta {
			if err := txn.Set([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		return nil, err
	}
	return Open(dir, nil)
}

// DropUnsigned cuts a replica left with unsigned entries past its signed
// checkpoint (an interrupted import or sync) back to that checkpoint: to size 0
// when no checkpoint was ever stored. It returns how many entries it
// dropped. Entries past a signed checkpoint were never vouched for by
// anyone; a stored size below the checkpoint is not an interrupted import
// and is left for Verify to report.
func (l *Log) DropUnsigned() (int64, error) {
	size := l.Size()
	target := int64(0)
	signed, err := l.Checkpoint()
	var ie *IntegrityError
	switch {
	case err == nil:
		cp, err := formats.OpenCheckpoint(signed, l.lkey)
		if err != nil {
			return 0, err
		}
		target = cp.Size
	case !errors.As(err, &ie):
		return 0, err
	}
	if size <= target {
		return 0, nil
	}
	return size - target, l.truncateTo(target)
}

// truncateTo removes entries n.. and the tree hashes only they produced,
// and sets the stored size to n, in transactions of bounded size.
func (l *Log) truncateTo(n int64) error {
	for {
		size := l.Size()
		if size <= n {
			return nil
		}
		from := max(n, size-1024)
		l.proofHashes.Invalidate()
		err := l.db.Update(func(txn Txn) error {
			for i := from; i < size; i++ {
				if err := txn.Delete(indexKey(prefixEntry, i)); err != nil {
					return err
				}
			}
			for h := tlog.StoredHashIndex(0, from); h < tlog.StoredHashIndex(0, size); h++ {
				if err := txn.Delete(indexKey(prefixHash, h)); err != nil {
					return err
				}
			}
			if err := deleteHistoryAfter(txn, from); err != nil {
				return err
			}
			if b, ok, err := stateBinding(txn); err != nil || (ok && b.Size > from) {
				// The state index covered entries removed: the next reader
				// rebuilds it (stateview.Open finds no binding).
				if err := txn.Delete(keyState); err != nil {
					return err
				}
			}
			return txn.Set(keySize, sizeBytes(from))
		})
		l.proofHashes.Invalidate() // before and after: a proof reading meanwhile keeps nothing
		if err != nil {
			return err
		}
		l.size.Store(from)
		l.proofHashes.Invalidate()
	}
}

func sizeBytes(n int64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uint64(n))
	return b
}

// HistoryCheckpoint returns the stored history checkpoint of the batch
// that ends at entry size-1, as stored; an error wrapping ErrNoKey when
// there is none.
func (l *Log) HistoryCheckpoint(size int64) ([]byte, error) {
	var out []byte
	err := l.db.View(func(txn Txn) error {
		v, err := txn.Get(historyKey(size))
		out = bytes.Clone(v)
		return err
	})
	return out, err
}

// ReplaceHistoryCheckpoint stores signed, a history checkpoint the caller
// verified under the log's key, in place of the one the log holds for the
// same size (a replica correcting a refresh a source had put in the batch
// checkpoint's place), and drops the state index's binding. It refuses,
// changing nothing, when the log holds none of that size, or one of
// another tree.
func (l *Log) ReplaceHistoryCheckpoint(signed []byte) error {
	tc, err := l.lkey.Cosig().Open(signed)
	if err != nil {
		return err
	}
	return l.db.Update(func(txn Txn) error {
		held, err := txn.Get(historyKey(tc.Size))
		if err != nil {
			return err
		}
		if old, err := l.lkey.Cosig().Open(held); err != nil || old.Hash != tc.Hash {
			return fmt.Errorf("%w: the history checkpoint of size %d held is not of the same tree", ErrHistory, tc.Size)
		}
		// The state index goes: the next reader replays at the new times.
		return errors.Join(txn.Set(historyKey(tc.Size), signed), txn.Delete(keyState))
	})
}

// StoreCheckpoint stores signed, a checkpoint of the log's own tree
// (the same size and root as the latest it holds) that verifies under
// its key, as the log's latest, with full, the same with the witness
// cosignatures to keep (CosignedCheckpoint): a replica taking a newer
// checkpoint, or other cosignatures, of the tree it holds. It refuses,
// changing nothing, a checkpoint that does not verify or is of another
// tree.
func (l *Log) StoreCheckpoint(signed, full []byte) error {
	cp, err := formats.OpenCheckpoint(signed, l.lkey)
	if err != nil {
		return err
	}
	held, err := l.SignedHead()
	if err != nil {
		return err
	}
	if cp.Size != held.Size || cp.Hash != held.Hash || cp.Origin != held.Origin {
		return fmt.Errorf("%w: the checkpoint to store is of another tree (size %d) than the log's (size %d)", ErrInconsistent, cp.Size, held.Size)
	}
	return l.db.Update(func(txn Txn) error {
		if err := txn.Set(keyCheckpoint, signed); err != nil {
			return err
		}
		return setCosigned(txn, signed, full)
	})
}
