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
// to the bucket (besides when its writer sequenced one), and how long a
// round may take.
const (
	publishEvery     = 250 * time.Millisecond
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

// PublishLockName names the database's lock on publishing into c's
// bucket (GET_LOCK): one Writer's publisher at a time.
func (c Config) PublishLockName() string {
	sum := sha256.Sum256([]byte(c.Endpoint + "\x00" + c.Bucket))
	return "writ-publish:" + hex.EncodeToString(sum[:16])
}

// round brings the writer's log up to the database's batches (follow),
// then, when no other publisher is at it, carries what the log holds
// past the bucket's checkpoint there, read from the log itself (its
// entries verified as they were stored; a row's entries are never
// published as they are): the bucket's checkpoint must be this log's at
// its size; Tessera stores and integrates the entry bundles, each
// entry's leaf hash checked against the log's tree as it is read, and
// its root must be the log's; then writ's history bundles (each batch's
// signed checkpoint), and the log's checkpoint, once the lock is still
// held and the bucket's checkpoint unchanged. The batches the bucket then
// holds are pruned from the database, all but the latest batch (the
// head a writer sequences after).
func (p *publisher) round() error {
	w := p.w
	ctx, cancel := context.WithTimeout(context.Background(), publishRoundTime)
	defer cancel()
	if err := w.follow(ctx); err != nil {
		return err
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	name := w.c.PublishLockName()
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", name).Scan(&got); err != nil || got.Int64 != 1 {
		return err // another writer's publisher is at it
	}
	defer conn.ExecContext(context.Background(), "SELECT RELEASE_LOCK(?)", name)
	found, cp, err := w.published(ctx)
	if err != nil {
		return err
	}
	signed, err := w.l.Checkpoint()
	if err != nil {
		return err
	}
	head, err := formats.OpenCheckpoint(signed, w.l.Key())
	if err != nil || head.Size <= cp.Size {
		return err
	}
	if root, err := w.l.TreeHash(cp.Size); err != nil || root != cp.Hash {
		return fmt.Errorf("%w: the bucket's checkpoint of %d entries is not this log's (%v)", ErrOtherLog, cp.Size, err)
	}
	err = w.l.ReadTiles(head, func(read func(tiles.Tile) ([]byte, error)) error {
		if err := migrateEntries(ctx, w.target, read, head, w.c.Stall); err != nil {
			return err
		}
		_, err := putHistory(ctx, w.b, read, cp.Size, head.Size)
		return err
	})
	if err != nil {
		return err
	}
	held := func(ctx context.Context) error {
		var mine sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?) = CONNECTION_ID()", name).Scan(&mine); err != nil || mine.Int64 != 1 {
			return fmt.Errorf("%w: this publisher lost its lock %s (%v)", ErrBusy, name, err)
		}
		return nil
	}
	if err := putCheckpoint(ctx, w.b, held, found, signed); err != nil {
		return err
	}
	var latest sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT MAX(first) FROM writ_batch").Scan(&latest); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "DELETE FROM writ_batch WHERE size <= ? AND first < ?", head.Size, latest.Int64)
	return err
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
