package engine

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/transparency-dev/tessera"
	taws "github.com/transparency-dev/tessera/storage/aws"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/tlog"
)

// Writer is one writer of an authority log on an engine, beside any
// number of others on the same database and bucket, each with its own
// copy of the log: the log's ledger.Sequencer (Log.SetSequencer). The
// database's writ_batch table is the log's sequence: one row a batch
// (its first index, its signed checkpoint, its entries), the first index
// its primary key, so no two batches ever take the same place. A batch
// is judged and sequenced under the engine's lock (a GET_LOCK in the
// database, the one Migrate takes), so no two writers judge against the
// same state:
//
//  1. Begin takes the lock and brings this writer's log to the engine's
//     head: the batches other writers sequenced, each verified (its
//     checkpoint under the log's key, its entries hashing to the signed
//     root) and judged again (SetExtend: verify.Authority.Extend); a
//     writer further behind than the database keeps syncs from the
//     bucket first (replica.SyncLog);
//  2. the log's gate judges the batch against that state, and the log
//     builds and signs its tree and checkpoint;
//  3. Publish inserts the batch's row, on the lock's connection (so only
//     while the lock is held);
//  4. the log commits the batch, End releases the lock, and the batch is
//     answered: it is durable in the engine's database.
//
// Each writer's publisher (publisher.go) keeps its log up with the
// batches other writers sequence, and carries what the log holds to the
// bucket, one writer's publisher at a time: Tessera stores and
// integrates the entries, read from the log (never from the database's
// rows), its root the log's; then writ's history bundles and the
// checkpoint; a runner syncs from the bucket. A step that does not
// answer within Config.Stall (DefaultWriterStall when zero) fails the
// batch with ErrUnavailable, nothing stored here; so does a database
// keeping more than MaxBacklog entries the bucket lacks. The bucket is
// read only when the database keeps no batch: a store that does not
// answer holds up the bucket, not the answers, up to that bound.
type Writer struct {
	c      Config
	l      *ledger.Log
	b      *bucket
	db     *sql.DB
	target *tessera.MigrationTarget

	mu     sync.Mutex // the open batch (Begin to End), and extend
	conn   *sql.Conn  // the lock's
	head   int64      // the engine's size Begin found
	extend func() error
	// loaded is closed by the first SetExtend: Begin waits for it (at
	// most a step's Stall) before it takes the batch.
	loaded     chan struct{}
	loadedOnce sync.Once

	pub publisher
}

// DefaultWriterStall is a Writer's bound on one step of a batch (taking
// the lock, a database query, a bucket request).
const DefaultWriterStall = 15 * time.Second

// MaxBacklog is how many entries the database may keep batches of
// (those not yet in the bucket, and the last that is: an object store
// that does not answer) before a Writer refuses batches
// (ErrUnavailable): what the database holds for the publishers is
// bounded.
const MaxBacklog = 1 << 18

// ErrBehind: the engine holds entries this writer could not catch up
// with (its state not loaded yet: no SetExtend).
var ErrBehind = errors.New("the engine holds entries this writer has not caught up with")

// tables are writ's in the engine's database: the log's sequence, a
// row a batch; and, once the log was taken back (Back), the size it was
// taken back at, after which no batch is sequenced.
var tables = []string{`CREATE TABLE IF NOT EXISTS writ_batch (
	first BIGINT NOT NULL PRIMARY KEY,
	size BIGINT NOT NULL,
	signed BLOB NOT NULL,
	entries LONGBLOB NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS writ_closed (id INT NOT NULL PRIMARY KEY, size BIGINT NOT NULL)`}

// ErrClosed: the log was taken back from the engine (Back); the engine
// sequences no more batches.
var ErrClosed = errors.New("the engine is closed")

// OpenWriter returns the writer of the authority log l (open for writing
// with its checkpoint key) on the engine c, installs it as l's
// sequencer, and starts its publisher. The engine must hold this log
// (writ ledger migrate puts it there): a bucket without a checkpoint of
// it is ErrOtherLog. Errors: ErrConfig, ErrUnavailable, ErrOtherLog.
func OpenWriter(ctx context.Context, l *ledger.Log, c Config) (*Writer, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if c.Stall == 0 {
		c.Stall = DefaultWriterStall
	}
	if err := c.reachable(ctx); err != nil {
		return nil, err
	}
	w := &Writer{c: c, l: l, b: newBucket(c), loaded: make(chan struct{})}
	if _, _, err := w.published(ctx); err != nil {
		return nil, err
	}
	// Entries a catch-up killed before its checkpoint left (a batch it
	// stores in more than one transaction) go: the next catch-up
	// stores them again.
	if _, err := l.DropUnsigned(); err != nil {
		return nil, err
	}
	db, err := sql.Open("mysql", c.DSN)
	if err != nil {
		return nil, fmt.Errorf("%w: the database %s: %w", ErrConfig, redact(c.DSN), err)
	}
	for _, t := range tables {
		if _, err := db.ExecContext(ctx, t); err != nil {
			db.Close()
			return nil, fmt.Errorf("%w: creating writ's tables in %s: %w", ErrUnavailable, redact(c.DSN), err)
		}
	}
	drv, err := taws.New(ctx, taws.Config{SDKConfig: &c.AWS, S3Options: c.s3Options, Bucket: c.Bucket, DSN: c.DSN})
	if err == nil {
		w.target, err = tessera.NewMigrationTarget(ctx, drv, tessera.NewMigrationOptions())
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("the engine (database %s, bucket %s): %w", redact(c.DSN), c.Bucket, err)
	}
	w.db = db
	l.SetSequencer(w)
	w.pub.start(w)
	return w, nil
}

// SetExtend installs what extends the log's authority state by the
// entries Begin stores from other writers (verify.Authority.Extend,
// once the state is loaded). Until then a batch waits for it, up to a
// step's Stall, and then, if the writer is behind the engine, fails
// (ErrBehind).
func (w *Writer) SetExtend(f func() error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.extend = f
	w.loadedOnce.Do(func() { close(w.loaded) })
}

// Close stops the publisher, after one last round (what this writer
// sequenced reaches the bucket unless the engine does not answer), and
// releases the database; close the log after.
func (w *Writer) Close() error {
	w.pub.stop()
	return w.db.Close()
}

// step is a context bounded by the writer's stall.
func (w *Writer) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), w.c.Stall)
}

// published reads the bucket's checkpoint: its bytes and what it signs.
// Errors: ErrUnavailable, ErrOtherLog (none, or not under the log's
// key).
func (w *Writer) published(ctx context.Context) ([]byte, formats.Checkpoint, error) {
	signed, err := w.b.get(ctx, "checkpoint", formats.MaxCheckpointSize)
	if err != nil {
		return nil, formats.Checkpoint{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	} else if signed == nil {
		return nil, formats.Checkpoint{}, fmt.Errorf("%w: bucket %s holds no checkpoint: run `writ ledger migrate` first", ErrOtherLog, w.c.Bucket)
	}
	cp, err := formats.OpenCheckpoint(signed, w.l.Key())
	if err != nil {
		return nil, cp, fmt.Errorf("%w: the bucket's checkpoint does not verify under this log's key (%v)", ErrOtherLog, err)
	}
	return signed, cp, nil
}

// Begin takes the engine's lock and brings the log to the engine's head
// (ledger.Sequencer). Errors: ErrBusy (the lock not had within the
// stall), ErrUnavailable, ErrOtherLog, ErrBehind, and those of the
// entries caught up with (a *replica.SourceError, an *ledger.IntegrityError,
// the state's refusal).
func (w *Writer) Begin() error {
	// A writer just started loads its state meanwhile: a batch that
	// must catch up waits for it, up to a step's bound, rather than be
	// refused at once (ErrBehind); it waits before the lock, which
	// SetExtend takes.
	select {
	case <-w.loaded:
	case <-time.After(w.c.Stall):
	}
	w.mu.Lock()
	ctx, cancel := w.step()
	defer cancel()
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("%w: the database %s: %w", ErrUnavailable, redact(w.c.DSN), err)
	}
	w.conn = conn
	var got sql.NullInt64
	name := w.c.lockName()
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", name, int(w.c.Stall/time.Second)).Scan(&got); err != nil {
		return fmt.Errorf("%w: the database's lock %s: %w", ErrUnavailable, name, err)
	} else if got.Int64 != 1 {
		return fmt.Errorf("%w (lock %s on bucket %s, waited %s)", ErrBusy, name, w.c.Bucket, w.c.Stall)
	}
	return w.catchUp(ctx)
}

// Publish sequences the batch (ledger.Sequencer): its row inserted on
// the lock's connection, only right after the engine's head and while
// the engine is not closed (Back). A batch of no entry (a refreshed
// checkpoint) is not sequenced. When the database's answer is lost (the
// connection failed), the row is looked for on another connection: the
// batch is sequenced when it is there. Errors: ErrUnavailable (whether
// the database took the batch unknown when it does not answer), ErrBusy
// (another batch at its place: the lock was lost), ErrClosed, the log's.
func (w *Writer) Publish(old int64, cp formats.Checkpoint, signed []byte, read func(tiles.Tile) ([]byte, error)) error {
	if cp.Size == old {
		return nil
	}
	ctx, cancel := w.step()
	defer cancel()
	entries, err := newEntries(read, old, cp.Size)
	if err != nil {
		return err
	}
	// The latest batch is never pruned, so its size is the head (the
	// bucket's, when none is kept).
	res, err := w.conn.ExecContext(ctx, `INSERT INTO writ_batch (first, size, signed, entries)
		SELECT ?, ?, ?, ? FROM DUAL WHERE (SELECT COALESCE(MAX(size), ?) FROM writ_batch) = ?
		AND NOT EXISTS (SELECT 1 FROM writ_closed)`,
		old, cp.Size, signed, entries, w.head, old)
	var my *mysql.MySQLError
	switch {
	case errors.As(err, &my) && my.Number == 1062: // duplicate key
		return fmt.Errorf("%w: another writer sequenced a batch at entry %d: this writer lost the engine's lock", ErrBusy, old)
	case errors.As(err, &my):
		return fmt.Errorf("%w: sequencing the batch in the database: %w", ErrUnavailable, err)
	case err != nil:
		if w.sequenced(old, signed) {
			break // the database took it; its answer was lost
		}
		return fmt.Errorf("%w: sequencing the batch in the database, which failed before it answered (it may have taken it): %w", ErrUnavailable, err)
	default:
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return w.notTaken(ctx, old, err)
		}
	}
	w.pub.poke()
	return nil
}

// sequenced reports whether the database holds a batch at first with
// the checkpoint signed, asked on other connections for up to the stall.
func (w *Writer) sequenced(first int64, signed []byte) bool {
	ctx, cancel := w.step()
	defer cancel()
	for ctx.Err() == nil {
		var got []byte
		err := w.db.QueryRowContext(ctx, "SELECT signed FROM writ_batch WHERE first = ?", first).Scan(&got)
		if err == nil || errors.Is(err, sql.ErrNoRows) {
			return bytes.Equal(got, signed)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

// notTaken is the error for an insert the guard refused: the engine
// closed (ErrClosed), or another head (ErrBusy).
func (w *Writer) notTaken(ctx context.Context, first int64, err error) error {
	var size sql.NullInt64
	if qerr := w.conn.QueryRowContext(ctx, "SELECT size FROM writ_closed").Scan(&size); qerr == nil {
		return fmt.Errorf("%w at %d entries: the log was taken back from it (migrate --back); it takes no more batches", ErrClosed, size.Int64)
	}
	return fmt.Errorf("%w: the engine's head is no longer entry %d: this writer lost the engine's lock (%v)", ErrBusy, first, err)
}

// End releases the engine's lock (ledger.Sequencer).
func (w *Writer) End() {
	if w.conn != nil {
		ctx, cancel := w.step()
		w.conn.ExecContext(ctx, "SELECT RELEASE_LOCK(?)", w.c.lockName())
		cancel()
		w.conn.Close()
		w.conn = nil
	}
	w.mu.Unlock()
}

// newEntries returns the entries from old to size, read from the entry
// bundles with read, framed as in a bundle (tiles.AppendBundle).
func newEntries(read func(tiles.Tile) ([]byte, error), old, size int64) ([]byte, error) {
	var out []byte
	for _, t := range tlog.NewTiles(tiles.Height, old, size) {
		if t.L != 0 {
			continue
		}
		data, err := read(tiles.Tile{Kind: tiles.KindEntries, Level: -1, N: t.N, W: t.W})
		if err != nil {
			return nil, err
		}
		entries, err := tiles.ParseBundle(data, t.W)
		if err != nil {
			return nil, err
		}
		for i, e := range entries {
			if t.N*tiles.Width+int64(i) >= old {
				if out, err = tiles.AppendBundle(out, e); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// compile-time check: a Writer is a ledger.Sequencer.
var _ ledger.Sequencer = (*Writer)(nil)
