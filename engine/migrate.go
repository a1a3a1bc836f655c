package engine

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/transparency-dev/tessera"
	taws "github.com/transparency-dev/tessera/storage/aws"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/verify"
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
// to the engine c names, never what a replica would refuse. It holds the
// database's lock on migrations into the bucket throughout (ErrBusy when
// another migrate keeps it past 15 s), and first verifies the whole log:
// every entry, tree hash and history checkpoint (ledger.Log.Verify) and
// every record's authority (verify.LoadAuthority); else ErrUnverified,
// nothing written. The engine must hold an earlier state of this log, or
// nothing: the bucket's checkpoint, if any, an earlier one of it; the
// tree its database integrated no longer than the log, and the bucket's
// tiles up to it this log's (else ErrOtherLog, nothing written). Then
// Tessera's migration (tessera.MigrationTarget) stores the entry bundles
// past what its database integrated, each entry's leaf hash checked
// against the stored tree as it is read (an *ledger.IntegrityError stops
// it at once), builds the tree and refuses another root than the signed
// one (ErrOtherLog); the tiles the bucket then holds are compared with
// this log's, byte for byte; the history bundles that changed and the
// checkpoint with its stored cosignatures follow, the checkpoint last, so
// a reader that sees it finds every tile it names. Without progress for
// c.Stall (a store gone away) it gives up with ErrUnavailable: Tessera
// itself waits for ever. Run again after more appends, it copies what is
// new. Errors: ErrConfig, ErrUnavailable, ErrBusy, ErrUnverified,
// ErrOtherLog, the log's, and the engine's with what was being done.
func Migrate(ctx context.Context, l *ledger.Log, c Config) (*Migrated, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if err := c.reachable(ctx); err != nil {
		return nil, err
	}
	held, unlock, err := c.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := noWriters(ctx, c); err != nil {
		return nil, err
	}
	// Every entry, tree hash and history checkpoint (what a replica
	// fetches), then every record's authority: the whole log, since a
	// migration reads and publishes it whole.
	if _, err := l.Verify(l.Key(), nil); err != nil {
		return nil, fmt.Errorf("%w, nothing migrated: %w", ErrUnverified, err)
	}
	if _, err := verify.LoadAuthority(l, l.Key()); err != nil {
		return nil, fmt.Errorf("%w, nothing migrated: %w", ErrUnverified, err)
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
	old, found, err := holdsPrefix(ctx, b, l, head)
	if err != nil {
		return nil, err
	}
	drv, err := taws.New(ctx, taws.Config{SDKConfig: &c.AWS, S3Options: c.s3Options, Bucket: c.Bucket, DSN: c.DSN})
	if err != nil {
		return nil, fmt.Errorf("the engine: %w", err)
	}
	integrated, err := integratedSize(ctx, drv)
	if err != nil {
		return nil, err
	} else if integrated > head.Size {
		return nil, fmt.Errorf("%w: its database has a tree of %d entries, this log %d", ErrOtherLog, integrated, head.Size)
	}
	target, err := tessera.NewMigrationTarget(ctx, drv, tessera.NewMigrationOptions())
	if err != nil {
		return nil, fmt.Errorf("the engine's migration target (database %s, bucket %s): %w", redact(c.DSN), c.Bucket, err)
	}
	res := &Migrated{Origin: l.Origin(), Size: head.Size, Root: hex.EncodeToString(head.Hash[:])}
	err = l.ReadTiles(head, func(read func(tiles.Tile) ([]byte, error)) error {
		// Tessera copies only past what its database integrated: the
		// bucket must hold that much of this log already.
		if err := sameTiles(ctx, b, read, old, integrated); err != nil {
			return err
		}
		if err := migrateEntries(ctx, target, read, head, c.stall()); err != nil {
			return err
		}
		if err := sameTiles(ctx, b, read, old, head.Size); err != nil {
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
	if err := putCheckpoint(ctx, b, held, found, signed); err != nil {
		return nil, err
	}
	return res, nil
}

// putCheckpoint writes signed as the bucket's checkpoint once the lock is
// still this migrate's and the bucket's checkpoint still the one found:
// no other migrate wrote meanwhile (a lost database connection loses the
// lock), so this one cannot roll it back (ErrBusy otherwise).
func putCheckpoint(ctx context.Context, b *bucket, held func(context.Context) error, found, signed []byte) error {
	if err := held(ctx); err != nil {
		return err
	}
	if now, err := b.get(ctx, "checkpoint", formats.MaxCheckpointSize); err != nil {
		return err
	} else if !bytes.Equal(now, found) {
		return fmt.Errorf("%w: the bucket's checkpoint changed while this migrate ran; nothing more written", ErrBusy)
	}
	return b.put(ctx, "checkpoint", signed)
}

// migrateEntries has Tessera copy the entry bundles of the tree head
// signs, read with read, and build its tree. A bundle the log cannot give
// (an entry whose leaf hash is not the stored one: an
// *ledger.IntegrityError) stops the migration at once, and is the error:
// Tessera would retry it, and wait for its integration.
func migrateEntries(ctx context.Context, target *tessera.MigrationTarget, read func(tiles.Tile) ([]byte, error), head formats.Checkpoint, stall time.Duration) error {
	mctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var progress atomic.Int64 // when a bundle was last fetched, Unix ns
	progress.Store(time.Now().UnixNano())
	go watch(mctx, stop, &progress, stall)
	var mu sync.Mutex // one snapshot's reads, one at a time
	fetch := func(_ context.Context, n uint64, partial uint8) ([]byte, error) {
		progress.Store(time.Now().UnixNano())
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
		if msg := err.Error(); strings.Contains(msg, "root hash") || strings.Contains(msg, "precondition failed") {
			// Tessera's tree, built from what it holds, is another; or a
			// bundle there (written create-if-absent) is another's.
			return fmt.Errorf("%w: the engine's tree is not this log's (%v)", ErrOtherLog, err)
		}
		return fmt.Errorf("the engine's migration of %d entries: %w", head.Size, err)
	}
	return nil
}

// integratedSize is the size of the tree the engine's database has
// integrated (0 for none).
func integratedSize(ctx context.Context, drv tessera.Driver) (int64, error) {
	st, ok := drv.(*taws.Storage)
	if !ok {
		return 0, fmt.Errorf("the engine's driver %T has no migration", drv)
	}
	mw, _, err := st.MigrationWriter(ctx, tessera.NewMigrationOptions())
	if err != nil {
		return 0, fmt.Errorf("%w: its database: %w", ErrUnavailable, err)
	}
	n, err := mw.IntegratedSize(ctx)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("%w: its database's tree: %w", ErrUnavailable, err)
	}
	return int64(n), nil
}

// watch cancels ctx (stop) with ErrUnavailable once no bundle was
// fetched for stall: Tessera waits for ever for an engine that went away,
// or for bundles it failed to store.
func watch(ctx context.Context, stop context.CancelCauseFunc, progress *atomic.Int64, stall time.Duration) {
	t := time.NewTicker(min(stall/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if since := time.Since(time.Unix(0, progress.Load())); since > stall {
				stop(fmt.Errorf("%w: no progress for %s (a bundle not stored, or its integration not done)", ErrUnavailable, since.Round(time.Second)))
				return
			}
		}
	}
}

// sameTiles checks that the bucket holds, byte for byte, the hash tiles
// and entry bundles that grew from a tree of old entries to one of size
// (none when size <= old): Tessera copies only past the size its
// database has integrated, so a bucket that lacks them, or holds another
// tree's, is found here, before a checkpoint would point readers at it
// (ErrOtherLog).
func sameTiles(ctx context.Context, b *bucket, read func(tiles.Tile) ([]byte, error), old, size int64) error {
	for _, t := range tlog.NewTiles(tiles.Height, old, size) {
		kinds := []tiles.Tile{{Kind: tiles.KindHashTile, Level: t.L, N: t.N, W: t.W}}
		if t.L == 0 {
			kinds = append(kinds, tiles.Tile{Kind: tiles.KindEntries, Level: -1, N: t.N, W: t.W})
		}
		for _, k := range kinds {
			want, err := read(k)
			if err != nil {
				return err
			}
			got, err := b.get(ctx, k.Path(), int64(len(want)))
			if err != nil {
				return err
			}
			if got == nil {
				return fmt.Errorf("%w: it lacks %s, which this log's tree has (its database had integrated the tree already)", ErrOtherLog, k.Path())
			} else if !bytes.Equal(got, want) {
				return fmt.Errorf("%w: its %s is not this log's", ErrOtherLog, k.Path())
			}
		}
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

// ErrHasWriters: writers append to the engine (its writ_batch table
// holds their batches), so a log copied there would not follow them;
// nothing was written.
var ErrHasWriters = errors.New("writers append to the engine")

// noWriters checks that no writer sequenced a batch on the engine
// (ErrHasWriters), before a migrate writes there.
func noWriters(ctx context.Context, c Config) error {
	db, err := sql.Open("mysql", c.DSN)
	if err != nil {
		return fmt.Errorf("%w: the database %s: %w", ErrConfig, redact(c.DSN), err)
	}
	defer db.Close()
	var n int64
	err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM writ_batch").Scan(&n)
	var my *mysql.MySQLError
	switch {
	case errors.As(err, &my) && my.Number == 1146: // no such table: no writer yet
		return nil
	case err != nil:
		return fmt.Errorf("%w: reading writ_batch: %w", ErrUnavailable, err)
	case n > 0:
		return fmt.Errorf("%w (writ_batch in %s holds their batches): migrate a log only to an engine no writer appended to; take it back with --back", ErrHasWriters, redact(c.DSN))
	}
	return nil
}

// ErrOtherLog is wrapped by the error for an engine that holds what is
// not an earlier state of this log: a checkpoint that is not an earlier
// one of it, tiles that are not its, a tree in the database that is
// another.
var ErrOtherLog = errors.New("the engine holds another log")

// holdsPrefix checks that the bucket's checkpoint, if it has one, is an
// earlier one of l, and returns its size (0 for none) and its bytes (nil
// for none): it verifies under l's key, its size is at most head's, and
// the stored tree has its root at its size. Otherwise the error wraps
// ErrOtherLog, and nothing is written.
func holdsPrefix(ctx context.Context, b *bucket, l *ledger.Log, head formats.Checkpoint) (int64, []byte, error) {
	signed, err := b.get(ctx, "checkpoint", formats.MaxCheckpointSize)
	if err != nil || signed == nil {
		return 0, nil, err
	}
	cp, err := formats.OpenCheckpoint(signed, l.Key())
	if err != nil {
		return 0, nil, fmt.Errorf("%w: its checkpoint does not verify under this log's key (%v)", ErrOtherLog, err)
	}
	if cp.Size > head.Size {
		return 0, nil, fmt.Errorf("%w: its checkpoint is a later one of this log (%d entries; this ledger has %d): sync the ledger first", ErrOtherLog, cp.Size, head.Size)
	}
	if root, err := l.TreeHash(cp.Size); err != nil || root != cp.Hash {
		return 0, nil, fmt.Errorf("%w: its checkpoint's root at %d entries is not this log's (%v)", ErrOtherLog, cp.Size, err)
	}
	return cp.Size, signed, nil
}
