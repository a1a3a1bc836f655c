package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/tlog"
)

// ErrUndecided: two checkpoints of a log whose consistency the source's
// hash tiles cannot prove either way (the larger tree is not published
// there, e.g. a witness cosigned a checkpoint the publication has not
// reached yet).
var ErrUndecided = errors.New("consistency cannot be decided from the published tiles")

// CheckViews proves that two signed checkpoints of one log, published
// (the one a sync is about to take) and seen (obtained elsewhere: a
// witness's latest, from its c2sp.org/tlog-witness monitoring URL), are
// two views of one append-only tree (RFC 9162 §2.1.4): equal sizes must
// have equal roots; otherwise a consistency proof from the smaller to
// the larger is read from src's hash tiles, which tlog checks against the
// larger root as it reads them, and must lead to the smaller root. Both
// must verify under vkey. Errors: ErrCheckpointSignature or
// ErrMalformedCheckpoint; an *InconsistencyError with both signed
// checkpoints (Trusted is published, Found is seen) and the failing proof,
// a split view; ErrUndecided when the larger tree's tiles are not at src.
func CheckViews(ctx context.Context, published, seen []byte, vkey string, src tiles.Source) error {
	pub, err := OpenCheckpoint(published, vkey)
	if err != nil {
		return fmt.Errorf("the published checkpoint: %w", err)
	}
	found, err := OpenCheckpoint(seen, vkey)
	if err != nil {
		return fmt.Errorf("the seen checkpoint: %w", err)
	}
	split := func(p *ConsistencyProof, why string) error {
		return &InconsistencyError{Trusted: pub, Found: found, TrustedSigned: published, FoundSigned: seen, Proof: p, Why: "split view: " + why}
	}
	if found.Size == pub.Size {
		if found.Hash != pub.Hash {
			return split(nil, "the same size with another root")
		}
		return nil
	}
	small, large := found, pub
	if found.Size > pub.Size {
		small, large = pub, found
	}
	if small.Size == 0 {
		if small.Hash != emptyRoot {
			return split(nil, "an empty tree with a root that is not the empty tree's")
		}
		return nil
	}
	s := &syncer{ctx: ctx, src: src, res: &Synced{}}
	path, err := tlog.ProveTree(large.Size, small.Size, tlog.TileHashReader(tlog.Tree{N: large.Size, Hash: large.Hash}, &tileReader{s: s}))
	if err != nil {
		return fmt.Errorf("%w: sizes %d and %d: %v", ErrUndecided, small.Size, large.Size, err)
	}
	p := &ConsistencyProof{OldSize: small.Size, NewSize: large.Size, OldRoot: small.Hash, NewRoot: large.Hash, Path: path}
	if p.Verify() != nil {
		return split(p, fmt.Sprintf("the tree of size %d is not a prefix of the tree of size %d", small.Size, large.Size))
	}
	return nil
}
