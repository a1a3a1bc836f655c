package engine

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/replica"
)

// errPruned: the database no longer keeps the batch after the log's
// size (a publisher pruned it once the bucket had it).
var errPruned = errors.New("batches pruned")

// follow brings the log up to the database's batches outside a batch of
// its own (a Begin and End with nothing judged), when the state is
// loaded and the database holds batches past the log: a writer that
// takes no submission keeps up with the others, so its next batch, and
// its publisher, need not catch up much.
func (w *Writer) follow(ctx context.Context) error {
	w.mu.Lock()
	loaded := w.extend != nil
	w.mu.Unlock()
	var head sql.NullInt64
	if err := w.db.QueryRowContext(ctx, "SELECT MAX(size) FROM writ_batch").Scan(&head); err != nil || !loaded || head.Int64 <= w.l.Size() {
		return err
	}
	err := w.Begin()
	w.End()
	return err
}

// catchUp brings the log to the engine's head, then the state: from
// the bucket when the database no longer keeps the batches after the
// log's size (its publisher pruned them meanwhile: tried again), then
// the database's batches.
func (w *Writer) catchUp(ctx context.Context) error {
	grew := false
	for try := 0; ; try++ {
		kept, head, signed, err := w.engineHead(ctx)
		if err != nil {
			return err
		}
		if head-kept > MaxBacklog {
			return fmt.Errorf("%w: the database keeps %d entries not yet in the bucket (the object store does not take them?)", ErrUnavailable, head-kept)
		}
		w.head = head
		size := w.l.Size()
		if size >= head {
			if err := w.atHead(signed); err != nil {
				return err
			}
			break
		} else if try == 3 {
			return fmt.Errorf("%w: the engine holds %d entries, this writer %d after catching up", ErrBehind, head, size)
		}
		grew = true
		if kept > size {
			// Published and no longer kept in the database: as a replica.
			if _, err := replica.SyncLog(ctx, w.l, w.b, replica.SyncOptions{VKey: w.l.Key(), History: true,
				Resume: func(*ledger.Log, bool) error { return nil }}); err != nil {
				return fmt.Errorf("catching up from the bucket: %w", err)
			}
		}
		if err := w.applyBatches(ctx); err != nil && !errors.Is(err, errPruned) {
			return err
		}
	}
	switch {
	case w.extend != nil:
		return w.extend() // also a state an earlier extension left behind
	case grew:
		return fmt.Errorf("%w: its state is not loaded yet", ErrBehind)
	}
	return nil
}

// engineHead reads the engine's head, in one query: the first entry the
// database keeps a batch of, and the latest batch's size and signed
// checkpoint; or, when it keeps none (no writer sequenced yet), the
// bucket's size (twice) and checkpoint.
func (w *Writer) engineHead(ctx context.Context) (kept, size int64, signed []byte, err error) {
	err = w.conn.QueryRowContext(ctx, "SELECT (SELECT MIN(first) FROM writ_batch), size, signed FROM writ_batch ORDER BY first DESC LIMIT 1").Scan(&kept, &size, &signed)
	if errors.Is(err, sql.ErrNoRows) {
		signed, cp, err := w.published(ctx)
		return cp.Size, cp.Size, signed, err
	} else if err != nil {
		return 0, 0, nil, fmt.Errorf("%w: reading writ_batch: %w", ErrUnavailable, err)
	}
	return kept, size, signed, nil
}

// atHead checks that a log as large as the engine's head is the one the
// head's checkpoint signed signs: the same bytes (this writer's batch,
// or one it stored), or the same size and root.
func (w *Writer) atHead(signed []byte) error {
	local, err := w.l.Checkpoint()
	if err != nil || bytes.Equal(local, signed) {
		return err
	}
	want, err := formats.OpenCheckpoint(signed, w.l.Key())
	if err != nil {
		return fmt.Errorf("%w: the engine's head checkpoint does not verify under this log's key (%v)", ErrOtherLog, err)
	}
	head, err := w.l.TrustedHead(w.l.Key())
	if err != nil {
		return err
	}
	if want.Size != head.Size || want.Hash != head.Hash {
		return fmt.Errorf("%w: its head (%d entries, root %x) is not this writer's (%d entries, root %x): was this log appended to without the engine?", ErrOtherLog, want.Size, want.Hash, head.Size, head.Hash)
	}
	return nil
}

// applyBatches stores the database's batches from the log's size on,
// in order, each checked as a replica checks what it syncs.
func (w *Writer) applyBatches(ctx context.Context) error {
	for {
		rows, err := w.conn.QueryContext(ctx, "SELECT first, signed, entries FROM writ_batch WHERE first >= ? ORDER BY first LIMIT 16", w.l.Size())
		if err != nil {
			return fmt.Errorf("%w: reading writ_batch: %w", ErrUnavailable, err)
		}
		n, err := w.applyRows(rows)
		if err != nil || n == 0 {
			return err
		}
	}
}

// applyRows stores each row's batch, and returns how many.
func (w *Writer) applyRows(rows *sql.Rows) (int, error) {
	defer rows.Close()
	n := 0
	for rows.Next() {
		var b sequenced
		if err := rows.Scan(&b.first, &b.signed, &b.framed); err != nil {
			return n, fmt.Errorf("%w: reading writ_batch: %w", ErrUnavailable, err)
		}
		if err := b.open(w.l.Key()); err != nil {
			return n, err
		}
		if b.first > w.l.Size() {
			return n, errPruned // a publisher pruned them meanwhile: from the bucket
		} else if b.first < w.l.Size() {
			return n, fmt.Errorf("%w: writ_batch has a batch at entry %d, inside this writer's log of %d", ErrOtherLog, b.first, w.l.Size())
		}
		if err := store(w.l, b); err != nil {
			return n, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("%w: reading writ_batch: %w", ErrUnavailable, err)
	}
	return n, nil
}

// store appends a sequenced batch to the log: its entries, whose tree
// must have the signed root, and its checkpoint, in the history too.
func store(l *ledger.Log, b sequenced) error {
	rw, err := l.NewReplicaWriter()
	if err != nil {
		return err
	}
	for _, e := range b.entries {
		if err := rw.Append(e); err != nil {
			rw.Abort()
			return err
		}
	}
	if err := rw.SetHistory(b.cp.Size, b.signed); err != nil {
		rw.Abort()
		return err
	}
	if err := rw.Finish(b.cp, b.signed, b.signed); err != nil {
		rw.Abort()
		return fmt.Errorf("%w: the batch at entry %d in writ_batch: %w", ErrOtherLog, b.first, err)
	}
	return nil
}
