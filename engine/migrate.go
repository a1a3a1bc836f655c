package engine

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/transparency-dev/tessera"
	taws "github.com/transparency-dev/tessera/storage/aws"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
	"golang.org/x/mod/sumdb/tlog"
)

// Migrated is what Migrate copied: the log's origin, the size and root
// hash of the checkpoint it carried over (hex), and the objects writ
// wrote beside Tessera's: the history bundles it wrote (those that changed
// since the bucket's checkpoint), and the checkpoint.
type Migrated struct {
	Origin  string `json:"origin" doc:"the log's origin (the first line of its checkpoint)"`
	Size    int64  `json:"size" doc:"the tree size of the checkpoint carried over (entries)"`
	Root    string `json:"root" doc:"its root hash (hex)"`
	History int    `json:"history_bundles" doc:"history bundles written (those that changed since the bucket's checkpoint)"`
}

// migrateWorkers is how many entry bundles Tessera copies at once.
const migrateWorkers = 4

// Migrate copies the authority log l, at its latest signed checkpoint,
// to the engine c names, never what a replica would refuse: l is first
// verified under its own verifier key and replayed (verify.LoadAuthority),
// else the error is a *runner.UnverifiedError. Then Tessera's migration (tessera.MigrationTarget)
// stores every entry bundle and builds the hash tiles and the database's
// tree state, and refuses unless the tree it built has the checkpoint's
// root; then writ's history bundles (for a log that keeps a history) and
// the checkpoint itself, with the witness cosignatures stored for it,
// are written to the bucket, the checkpoint last, so a reader that sees
// it finds every tile it names. Run again on the same engine
// after more appends, it copies what is new (Tessera skips the bundles
// already there). It refuses a bucket whose checkpoint is not an
// earlier one of this log (ErrOtherLog). Errors: c missing a field
// (ErrConfig); a database or
// bucket that does not answer (ErrUnavailable); the log's
// (an *ledger.IntegrityError for a stored tree that is not the signed
// one); the engine's, with what was being done.
func Migrate(ctx context.Context, l *ledger.Log, c Config) (*Migrated, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if err := c.reachable(ctx); err != nil {
		return nil, err
	}
	if _, err := verify.LoadAuthority(l, l.Key()); err != nil {
		return nil, &runner.UnverifiedError{Log: "authority", Err: err}
	}
	head, err := l.TrustedHead(l.Key())
	if err != nil {
		return nil, err
	}
	signed, err := l.CosignedCheckpoint()
	if err != nil {
		return nil, err
	}
	if cp, err := formats.OpenCheckpoint(signed, l.Key()); err != nil || cp != head {
		return nil, fmt.Errorf("the cosigned checkpoint is not the log's latest (%v)", err)
	}
	b := newBucket(c)
	old, err := holdsPrefix(ctx, b, l, head)
	if err != nil {
		return nil, err
	}
	drv, err := taws.New(ctx, taws.Config{SDKConfig: &c.AWS, S3Options: c.s3Options, Bucket: c.Bucket, DSN: c.DSN})
	if err != nil {
		return nil, fmt.Errorf("the engine: %w", err)
	}
	target, err := tessera.NewMigrationTarget(ctx, drv, tessera.NewMigrationOptions())
	if err != nil {
		return nil, fmt.Errorf("the engine's migration target (database %s, bucket %s): %w", redact(c.DSN), c.Bucket, err)
	}
	res := &Migrated{Origin: l.Origin(), Size: head.Size, Root: hex.EncodeToString(head.Hash[:])}
	err = l.ReadTiles(head, func(read func(tiles.Tile) ([]byte, error)) error {
		if err := migrateEntries(ctx, target, read, head); err != nil {
			return err
		}
		if l.HasHistory() {
			res.History, err = putHistory(ctx, b, read, old, head.Size)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := b.put(ctx, "checkpoint", signed); err != nil {
		return nil, err
	}
	return res, nil
}

// migrateEntries has Tessera copy the entry bundles of the tree head
// signs, read with read, and build its tree. A bundle the log cannot give
// (an entry whose leaf hash is not the stored one: an
// *ledger.IntegrityError) stops the migration at once, and is the error:
// Tessera would retry it, and wait for its integration.
func migrateEntries(ctx context.Context, target *tessera.MigrationTarget, read func(tiles.Tile) ([]byte, error), head formats.Checkpoint) error {
	mctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var mu sync.Mutex // one snapshot's reads, one at a time
	fetch := func(_ context.Context, n uint64, partial uint8) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		b, err := read(tiles.Tile{Kind: tiles.KindEntries, Level: -1, N: int64(n), W: width(partial)})
		if err != nil {
			stop(err)
		}
		return b, err
	}
	if err := target.Migrate(mctx, migrateWorkers, uint64(head.Size), head.Hash[:], fetch); err != nil {
		if cause := context.Cause(mctx); cause != nil && ctx.Err() == nil {
			return cause
		}
		return fmt.Errorf("the engine's migration of %d entries: %w", head.Size, err)
	}
	return nil
}

// putHistory writes the history bundles that changed from a tree of old
// entries to one of size, read with read, and returns how many.
func putHistory(ctx context.Context, b *bucket, read func(tiles.Tile) ([]byte, error), old, size int64) (int, error) {
	n := 0
	for _, t := range tlog.NewTiles(tiles.Height, old, size) {
		if t.L != 0 {
			continue
		}
		h := tiles.Tile{Kind: tiles.KindHistory, Level: -1, N: t.N, W: t.W}
		data, err := read(h)
		if err != nil {
			return n, err
		}
		if err := b.put(ctx, h.Path(), data); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// width is the width of an entry bundle Tessera names by its partial
// size (0 for a full bundle).
func width(partial uint8) int {
	if partial == 0 {
		return tiles.Width
	}
	return int(partial)
}

// ErrOtherLog is wrapped by the error for a bucket that holds a
// checkpoint that is not an earlier one of this log.
var ErrOtherLog = errors.New("the bucket holds another log")

// holdsPrefix checks that the bucket's checkpoint, if it has one, is an
// earlier one of l, and returns its size (0 for none): it verifies under
// l's key, its size is at most head's, and the stored tree has its root at
// its size. Otherwise the error wraps ErrOtherLog, and nothing is written.
func holdsPrefix(ctx context.Context, b *bucket, l *ledger.Log, head formats.Checkpoint) (int64, error) {
	signed, err := b.get(ctx, "checkpoint", formats.MaxCheckpointSize)
	if err != nil || signed == nil {
		return 0, err
	}
	cp, err := formats.OpenCheckpoint(signed, l.Key())
	if err != nil {
		return 0, fmt.Errorf("%w: its checkpoint does not verify under this log's key (%v)", ErrOtherLog, err)
	}
	if cp.Size > head.Size {
		return 0, fmt.Errorf("%w: its checkpoint has %d entries, this log %d", ErrOtherLog, cp.Size, head.Size)
	}
	if root, err := l.TreeHash(cp.Size); err != nil || root != cp.Hash {
		return 0, fmt.Errorf("%w: its checkpoint's root at %d entries is not this log's (%v)", ErrOtherLog, cp.Size, err)
	}
	return cp.Size, nil
}
