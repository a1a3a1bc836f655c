package formats

import (
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// ErrProof: a requested proof is out of range (an index or size beyond
// the log), or a proof does not verify.
var ErrProof = errors.New("proof")

// InclusionProof proves that the entry at Index is in the tree of
// TreeSize entries whose root is RootHash (RFC 9162 §2.1.3): LeafHash is
// the entry's RFC 6962 leaf hash, SHA-256(0x00 || entry), and Path is the
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

// Verify checks the proof (RFC 9162 §2.1.3.2) against its own leaf and
// root hashes. The error wraps ErrProof.
func (p *InclusionProof) Verify() error {
	if err := tlog.CheckRecord(p.Path, p.TreeSize, p.RootHash, p.Index, p.LeafHash); err != nil {
		return fmt.Errorf("%w: inclusion of entry %d in tree size %d: %w", ErrProof, p.Index, p.TreeSize, err)
	}
	return nil
}

// Verify checks the proof (RFC 9162 §2.1.4.2) against its own roots; two
// equal sizes need equal roots and an empty path. The error wraps
// ErrProof.
func (p *ConsistencyProof) Verify() error {
	if p.OldSize == p.NewSize {
		if p.OldRoot != p.NewRoot || len(p.Path) != 0 {
			return fmt.Errorf("%w: equal sizes %d with different roots", ErrProof, p.OldSize)
		}
		return nil
	}
	if err := tlog.CheckTree(p.Path, p.NewSize, p.NewRoot, p.OldSize, p.OldRoot); err != nil {
		return fmt.Errorf("%w: consistency from size %d to %d: %w", ErrProof, p.OldSize, p.NewSize, err)
	}
	return nil
}
