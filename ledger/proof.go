package ledger

import (
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// ErrProof: a requested proof is out of range (an index or size beyond
// the log), or a proof does not verify.
var ErrProof = errors.New("proof")

// InclusionProof proves that the entry at Index is in the tree of
// TreeSize entries whose root is RootHash (RFC 9162 §2.1.3): Path is the
// audit path, leaf to root.
type InclusionProof struct {
	Index    int64
	TreeSize int64
	LeafHash tlog.Hash
	RootHash tlog.Hash
	Path     []tlog.Hash
}

// ConsistencyProof proves that the tree of OldSize entries (OldRoot) is a
// prefix of the tree of NewSize entries (NewRoot) (RFC 9162 §2.1.4).
type ConsistencyProof struct {
	OldSize, NewSize int64
	OldRoot, NewRoot tlog.Hash
	Path             []tlog.Hash
}

// view runs f with a reader of stored tree hashes at a consistent
// snapshot, and the log size at that snapshot.
func (l *Log) view(f func(r tlog.HashReader, size int64) error) error {
	return l.db.View(func(txn Txn) error {
		return f(txnHashReader(txn), l.Size())
	})
}

// ProveInclusion returns the inclusion proof of entry index in the tree of
// size entries (size 0 means the current size). It reads at most
// 2·log2(size) stored hashes; it never rescans entries. Errors wrap
// ErrProof for an index or size out of range.
func (l *Log) ProveInclusion(index, size int64) (*InclusionProof, error) {
	var p *InclusionProof
	err := l.view(func(r tlog.HashReader, cur int64) error {
		if size == 0 {
			size = cur
		}
		if size > cur || index < 0 || index >= size {
			return fmt.Errorf("%w: entry %d in a tree of %d entries (the log holds %d)", ErrProof, index, size, cur)
		}
		path, err := tlog.ProveRecord(size, index, r)
		if err != nil {
			return err
		}
		root, err := tlog.TreeHash(size, r)
		if err != nil {
			return err
		}
		leaf, err := r.ReadHashes([]int64{tlog.StoredHashIndex(0, index)})
		if err != nil {
			return err
		}
		p = &InclusionProof{Index: index, TreeSize: size, LeafHash: leaf[0], RootHash: root, Path: path}
		return nil
	})
	return p, err
}

// ProveConsistency returns the consistency proof from the tree of oldSize
// entries to the tree of newSize entries (0 means the current size).
// Errors wrap ErrProof for sizes out of range (0 < oldSize <= newSize).
func (l *Log) ProveConsistency(oldSize, newSize int64) (*ConsistencyProof, error) {
	var p *ConsistencyProof
	err := l.view(func(r tlog.HashReader, cur int64) error {
		if newSize == 0 {
			newSize = cur
		}
		if oldSize < 1 || oldSize > newSize || newSize > cur {
			return fmt.Errorf("%w: from size %d to %d (the log holds %d)", ErrProof, oldSize, newSize, cur)
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
		p = &ConsistencyProof{OldSize: oldSize, NewSize: newSize, OldRoot: oldRoot, NewRoot: newRoot, Path: path}
		return nil
	})
	return p, err
}

// Verify checks the proof (RFC 9162 §2.1.3.2) against its own leaf and
// root hashes. The error wraps ErrProof.
func (p *InclusionProof) Verify() error {
	if err := tlog.CheckRecord(p.Path, p.TreeSize, p.RootHash, p.Index, p.LeafHash); err != nil {
		return fmt.Errorf("%w: inclusion of entry %d in tree size %d: %v", ErrProof, p.Index, p.TreeSize, err)
	}
	return nil
}

// Verify checks the proof (RFC 9162 §2.1.4.2) against its own roots. The
// error wraps ErrProof.
func (p *ConsistencyProof) Verify() error {
	if p.OldSize == p.NewSize {
		if p.OldRoot != p.NewRoot || len(p.Path) != 0 {
			return fmt.Errorf("%w: equal sizes %d with different roots", ErrProof, p.OldSize)
		}
		return nil
	}
	if err := tlog.CheckTree(p.Path, p.NewSize, p.NewRoot, p.OldSize, p.OldRoot); err != nil {
		return fmt.Errorf("%w: consistency from size %d to %d: %v", ErrProof, p.OldSize, p.NewSize, err)
	}
	return nil
}
