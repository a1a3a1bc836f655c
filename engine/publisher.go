package engine

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// sequenced is one batch of the log's sequence (a writ_batch row): its
// first index, its signed checkpoint and its entries, framed as in a
// bundle; open fills in what they say.
type sequenced struct {
	first          int64
	signed, framed []byte
	cp             formats.Checkpoint
	entries        [][]byte
}

// open verifies the batch's checkpoint under k and splits its entries,
// which must be as many as the checkpoint adds (ErrOtherLog otherwise).
func (b *sequenced) open(k *formats.LogKey) error {
	cp, err := formats.OpenCheckpoint(b.signed, k)
	if err != nil {
		return fmt.Errorf("%w: the batch at entry %d in writ_batch does not verify under this log's key (%v)", ErrOtherLog, b.first, err)
	}
	entries, err := unframe(b.framed)
	if err != nil || int64(len(entries)) != cp.Size-b.first {
		return fmt.Errorf("%w: the batch at entry %d in writ_batch holds %d entries for a checkpoint of %d (%v)", ErrOtherLog, b.first, len(entries), cp.Size, err)
	}
	b.cp, b.entries = cp, entries
	return nil
}

// Publishing bounds: how often a publisher looks for batches to carry
// to the bucket (besides when its writer sequenced one), and how much
// one round carries.
const (
	publishEvery     = 250 * time.Millisecond
	publishBatches   = 256
	publishBytes     = 32 << 20
	publishRoundTime = 2 * time.Minute
)

// publisher carries the sequenced batches to the bucket, in rounds, one
// writer's publisher at a time (the database's publish lock).
type publisher struct {
	w     *Writer
	pokes chan struct{}
	quit  chan struct{}
	done  chan struct{}
}

func (p *publisher) start(w *Writer) {
	p.w, p.pokes, p.quit, p.done = w, make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go p.run()
}

// poke asks for a round soon.
func (p *publisher) poke() {
	select {
	case p.pokes <- struct{}{}:
	default:
	}
}

// stop ends the publisher after one last round.
func (p *publisher) stop() {
	close(p.quit)
	<-p.done
}

// run does rounds until stop. A round that fails is tried again (the
// batches stay in the database; MaxBacklog turns an object store that
// keeps failing into refused batches), and Config.Warn hears of it, once
// until the error changes or a round succeeds.
func (p *publisher) run() {
	defer close(p.done)
	t := time.NewTicker(publishEvery)
	defer t.Stop()
	last := ""
	for {
		quit := false
		select {
		case <-p.quit:
			quit = true
		case <-p.pokes:
		case <-t.C:
		}
		err := p.round()
		if msg := fmt.Sprint(err); err != nil && msg != last && p.w.c.Warn != nil {
			p.w.c.Warn("publishing the sequenced batches to bucket %s: %v (tried again)", p.w.c.Bucket, err)
			last = msg
		} else if err == nil {
			last = ""
		}
		if quit {
			return
		}
	}
}

// publishLockName names the database's lock on publishing into the
// bucket.
func (c Config) publishLockName() string {
	sum := sha256.Sum256([]byte(c.Endpoint + "\x00" + c.Bucket))
	return "writ-publish:" + hex.EncodeToString(sum[:16])
}

// round carries the batches past the bucket's checkpoint there, when no
// other publisher is at it: Tessera stores and integrates their entries
// (the bucket's own entries before them, in the tile they start in),
// its root the last batch's signed one; the tiles; writ's history
// bundles (each batch's signed checkpoint); the last batch's checkpoint,
// once the lock is still held and the bucket's checkpoint unchanged.
// Then the batches the bucket holds are pruned from the database, all
// but the last (the head a writer sequences after).
func (p *publisher) round() error {
	w := p.w
	ctx, cancel := context.WithTimeout(context.Background(), publishRoundTime)
	defer cancel()
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	name := w.c.publishLockName()
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", name).Scan(&got); err != nil || got.Int64 != 1 {
		return err // another writer's publisher is at it
	}
	defer conn.ExecContext(context.Background(), "SELECT RELEASE_LOCK(?)", name)
	found, cp, err := w.published(ctx)
	if err != nil {
		return err
	}
	batches, err := pending(ctx, conn, w, cp.Size)
	if err != nil || len(batches) == 0 {
		return err
	}
	last := batches[len(batches)-1]
	read := batchReader(ctx, w.b, cp.Size, batches)
	if err := migrateEntries(ctx, w.target, read, last.cp, w.c.Stall); err != nil {
		return err
	}
	if _, err := putHistory(ctx, w.b, read, cp.Size, last.cp.Size); err != nil {
		return err
	}
	held := func(ctx context.Context) error {
		var mine sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?) = CONNECTION_ID()", name).Scan(&mine); err != nil || mine.Int64 != 1 {
			return fmt.Errorf("%w: this publisher lost its lock %s (%v)", ErrBusy, name, err)
		}
		return nil
	}
	if err := putCheckpoint(ctx, w.b, held, found, last.signed); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "DELETE FROM writ_batch WHERE size <= ? AND first < ?", last.cp.Size, last.first)
	return err
}

// pending reads the batches past from, in order, as many as one round
// carries; the first must start at from.
func pending(ctx context.Context, conn *sql.Conn, w *Writer, from int64) ([]sequenced, error) {
	rows, err := conn.QueryContext(ctx, "SELECT first, signed, entries FROM writ_batch WHERE size > ? ORDER BY first LIMIT ?", from, publishBatches)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sequenced
	bytes := 0
	for rows.Next() && bytes < publishBytes {
		var b sequenced
		if err := rows.Scan(&b.first, &b.signed, &b.framed); err != nil {
			return nil, err
		}
		if err := b.open(w.l.Key()); err != nil {
			return nil, err
		}
		if want := from; len(out) > 0 {
			want = out[len(out)-1].cp.Size
			if b.first != want {
				return nil, fmt.Errorf("%w: writ_batch has no batch at entry %d (the next is at %d)", ErrOtherLog, want, b.first)
			}
		} else if b.first != want {
			return nil, fmt.Errorf("%w: writ_batch has no batch at entry %d, the bucket's size (the next is at %d)", ErrOtherLog, want, b.first)
		}
		out = append(out, b)
		bytes += len(b.framed)
	}
	return out, rows.Err()
}

// batchReader reads the entry and history bundles of the tree the
// batches grow from from entries: each the bucket's bundle up to from
// (the tile's partial one) with the batches' part after it.
func batchReader(ctx context.Context, b *bucket, from int64, batches []sequenced) func(tiles.Tile) ([]byte, error) {
	var entries [][]byte
	for _, s := range batches {
		entries = append(entries, s.entries...)
	}
	return func(t tiles.Tile) ([]byte, error) {
		start := t.N * tiles.Width
		end := start + int64(t.W)
		var out []byte
		if from > start {
			prefix := t
			prefix.W = int(min(from, end) - start)
			data, err := b.Get(ctx, prefix.Path(), tiles.MaxBundleSize)
			if err != nil {
				return nil, err
			}
			out = append(out, data...)
		}
		var err error
		switch t.Kind {
		case tiles.KindEntries:
			for i := max(from, start); i < end && err == nil; i++ {
				out, err = tiles.AppendBundle(out, entries[i-from])
			}
		case tiles.KindHistory:
			for _, s := range batches {
				if s.cp.Size > max(from, start) && s.cp.Size <= end && err == nil {
					out, err = tiles.AppendBundle(out, s.signed)
				}
			}
		default:
			err = fmt.Errorf("a batch has no %s", t.Path())
		}
		return out, err
	}
}

// unframe splits entries framed as in a bundle (a big-endian uint16
// length before each), of any number.
func unframe(data []byte) ([][]byte, error) {
	var out [][]byte
	for off := 0; off < len(data); {
		if len(data)-off < 2 {
			return nil, fmt.Errorf("truncated length at byte %d", off)
		}
		n := int(binary.BigEndian.Uint16(data[off:]))
		off += 2
		if n == 0 || len(data)-off < n {
			return nil, fmt.Errorf("entry %d: %d bytes at byte %d", len(out), n, off)
		}
		out = append(out, data[off:off+n])
		off += n
	}
	return out, nil
}

// Get reads a file of the bucket (tiles.Source: a writer catching up
// syncs from it as a replica does).
func (b *bucket) Get(ctx context.Context, path string, max int64) ([]byte, error) {
	data, err := b.get(ctx, path, max)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", tiles.ErrFetch, err)
	} else if data == nil {
		return nil, fmt.Errorf("%w: %s: %w in bucket %s", tiles.ErrFetch, path, tiles.ErrNotPublished, b.name)
	}
	return data, nil
}

// String names the bucket, for messages (tiles.Source).
func (b *bucket) String() string { return "s3 bucket " + b.name }
