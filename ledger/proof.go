package ledger

import (
	"fmt"

	"github.com/writ-ledger/writ/ledger/formats"
	"golang.org/x/mod/sumdb/tlog"
)

// view runs f with a reader of stored tree hashes at a consistent
// snapshot (through the proof hash cache), and the log size at that
// snapshot.
func (l *Log) view(f func(r tlog.HashReader, size int64) error) error {
	gen := l.proofHashes.Generation()
	return l.db.View(func(txn Txn) error {
		return f(l.proofHashes.Reader(txnHashReader(txn), gen), l.Size())
	})
}

// ProveInclusion returns the inclusion proof of entry index in the tree of
// size entries (size 0 means the current size): ProveInclusions of one.
func (l *Log) ProveInclusion(index, size int64) (*formats.InclusionProof, error) {
	ps, err := l.ProveInclusions(size, index)
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// ProveInclusions returns the inclusion proofs (RFC 9162 §2.1.3) of the
// entries at indexes in the tree of size entries (size 0 means the
// current size), in order, read in one transaction with the root
// computed once: each proof reads at most log2(size) stored hashes; it
// never rescans entries. Errors wrap ErrProof for an index or size out of
// range.
func (l *Log) ProveInclusions(size int64, indexes ...int64) ([]*formats.InclusionProof, error) {
	out := make([]*formats.InclusionProof, len(indexes))
	err := l.view(func(r tlog.HashReader, cur int64) error {
		if size == 0 {
			size = cur
		}
		for _, index := range indexes {
			if size > cur || index < 0 || index >= size {
				return fmt.Errorf("%w: entry %d in a tree of %d entries (the log holds %d)", formats.ErrProof, index, size, cur)
			}
		}
		root, err := tlog.TreeHash(size, r)
		for i := 0; err == nil && i < len(indexes); i++ {
			var path tlog.RecordProof
			var leaf []tlog.Hash
			if path, err = tlog.ProveRecord(size, indexes[i], r); err == nil {
				leaf, err = r.ReadHashes([]int64{tlog.StoredHashIndex(0, indexes[i])})
			}
			if err == nil {
				out[i] = &formats.InclusionProof{Index: indexes[i], TreeSize: size, LeafHash: leaf[0], RootHash: root, Path: path}
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ProveConsistency returns the consistency proof from the tree of oldSize
// entries to the tree of newSize entries (0 means the current size).
// Errors wrap ErrProof for sizes out of range (0 < oldSize <= newSize).
func (l *Log) ProveConsistency(oldSize, newSize int64) (*formats.ConsistencyProof, error) {
	var p *formats.ConsistencyProof
	err := l.view(func(r tlog.HashReader, cur int64) error {
		if newSize == 0 {
			newSize = cur
		}
		if oldSize < 1 || oldSize > newSize || newSize > cur {
			return fmt.Errorf("%w: from size %d to %d (the log holds %d)", formats.ErrProof, oldSize, newSize, cur)
		}
		path, err := tlog.ProveTree(newSize, oldSize, r)
		if err != nil {
			return err
		}
		oldRoot, err := tlog.TreeHash(oldSize, r)
		if err != nil {
			return err
		}
		newRoot, err := tlog.TreeHash(newSize, r)
		if err != nil {
			return err
		}
		p = &formats.ConsistencyProof{OldSize: oldSize, NewSize: newSize, OldRoot: oldRoot, NewRoot: newRoot, Path: path}
		return nil
	})
	return p, err
}
