package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/tlog"
)

// ErrUndecided: a checkpoint seen elsewhere is larger than the replica
// and the source's hash tiles cannot prove it either way yet (the
// publication lags behind what a witness cosigned).
var ErrUndecided = errors.New("consistency with the replica cannot be decided yet")

// CheckSeen proves that seen, a signed checkpoint of this log obtained
// elsewhere (a witness's latest, from its c2sp.org/tlog-witness
// monitoring URL), and the replica's latest checkpoint are two views of
// one append-only log (RFC 9162 §2.1.4): a smaller seen tree must have
// the root the replica's stored tree has at its size; a larger one must
// extend the replica's, proven from the source's hash tiles (checked
// against seen's root as they are read). seen must verify under the log's
// key. Errors: ErrCheckpointSignature or ErrMalformedCheckpoint for seen;
// an *InconsistencyError with both signed checkpoints and the failing
// proof (a split view: the log showed one of them to someone else);
// ErrUndecided when a larger seen tree's hash tiles are not published.
func (l *Log) CheckSeen(ctx context.Context, seen []byte, src tiles.Source) error {
	found, err := OpenCheckpoint(seen, l.vkey)
	if err != nil {
		return err
	}
	head, err := l.CosignedCheckpoint()
	if err != nil {
		return err
	}
	local, err := OpenCheckpoint(head, l.vkey)
	if err != nil {
		return err
	}
	split := func(p *ConsistencyProof, why string) error {
		return &InconsistencyError{Trusted: local, Found: found, TrustedSigned: head, FoundSigned: seen, Proof: p,
			Why: "split view: " + why}
	}
	switch {
	case found.Origin != local.Origin:
		return split(nil, fmt.Sprintf("the seen checkpoint is of %q", found.Origin))
	case found.Size == local.Size:
		if found.Hash != local.Hash {
			return split(nil, "the same size with another root")
		}
		return nil
	case found.Size < local.Size:
		p, err := l.ProveConsistency(max(found.Size, 1), local.Size)
		if err != nil {
			return err
		}
		if found.Size > 0 && p.OldRoot == found.Hash {
			return nil
		}
		if found.Size == 0 && found.Hash == emptyRoot {
			return nil
		}
		return split(p, "the seen tree is not a prefix of the replica's")
	}
	s := &syncer{ctx: ctx, src: src, l: l, res: &Synced{}, local: local, remote: found}
	tree := tlog.Tree{N: found.Size, Hash: found.Hash}
	path, err := tlog.ProveTree(found.Size, local.Size, tlog.TileHashReader(tree, &tileReader{s: s}))
	if err != nil {
		return fmt.Errorf("%w: a checkpoint of size %d against the replica's %d: %v", ErrUndecided, found.Size, local.Size, err)
	}
	p := &ConsistencyProof{OldSize: local.Size, NewSize: found.Size, OldRoot: local.Hash, NewRoot: found.Hash, Path: path}
	if local.Size > 0 && p.Verify() != nil {
		return split(p, "the replica's tree is not a prefix of the seen one")
	}
	return nil
}
