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
// alone without the engine, and closes the engine (ErrClosed for every
// later batch of any writer): it takes the engine's lock, stores the
// batches every writer sequenced since l's size (from the bucket as a
// replica syncs, then from the database), each checkpoint verified under
// l's key and every entry judged again at its accepted time, as a Writer
// catches up before a batch (verify.Authority.Extend), and leaves the
// engine's own publication current. A writer's batch in flight is
// refused (ErrClosed). It returns the origin, size and
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
	if err == nil {
		// Closed under the lock, at the head just caught up with: no
		// writer sequences after it (Publish's guard).
		_, err = w.conn.ExecContext(ctx, "INSERT INTO writ_closed (id, size) VALUES (1, ?) ON DUPLICATE KEY UPDATE size = size", l.Size())
		if err != nil {
			err = fmt.Errorf("%w: closing the engine: %w", ErrUnavailable, err)
		}
	}
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
