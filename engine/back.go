package engine

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/verify"
)

// Back brings l, an authority log open for writing with its checkpoint
// key and a copy of the log on the engine c (the directory Migrate
// copied from, or a writer's), to the engine's head, so that it goes on
// alone without the engine: it takes the engine's lock, stores the
// batches every writer sequenced since l's size (from the bucket as a
// replica syncs, then from the database), each checkpoint verified under
// l's key and every entry judged again at its accepted time, as a Writer
// catches up before a batch (verify.Authority.Extend), and leaves the
// engine's own publication current. Stop the engine's writers first: a
// batch one sequences later is not in l. It returns the origin, size and
// root l then has (Migrated.History is 0). Errors: OpenWriter's,
// Writer.Begin's, verify.LoadAuthority's.
func Back(ctx context.Context, l *ledger.Log, c Config) (*Migrated, error) {
	a, err := verify.LoadAuthority(l, l.Key())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnverified, err)
	}
	w, err := OpenWriter(ctx, l, c)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	w.SetExtend(a.Extend)
	err = w.Begin()
	w.End()
	if err != nil {
		return nil, err
	}
	head, err := l.TrustedHead(l.Key())
	if err != nil {
		return nil, err
	}
	return &Migrated{Origin: l.Origin(), Size: head.Size, Root: hex.EncodeToString(head.Hash[:])}, nil
}
