package ledger

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/tlog"
)

// ReadTile returns the bytes of tile t of the tree of the given size,
// which must not exceed the log's signed checkpoint: a hash tile
// (tlog.ReadTileData), an entry bundle, or a history bundle (the history
// checkpoints of the sizes from N*256+1 to N*256+W, in size order: the
// batches that end in the tile, none when one batch spans it). A tile the tree does not have yet wraps ErrNotFound.
func (l *Log) ReadTile(t tiles.Tile, size int64) ([]byte, error) {
	var b bytes.Buffer
	if err := l.WriteTile(t, size, &b); err != nil {
		return nil, err
	}
	if b.Len() == 0 {
		return []byte{}, nil // a history tile one batch spans
	}
	return b.Bytes(), nil
}

// WriteTile writes tile t of the tree of the given size (as ReadTile
// returns it) to w as it reads it, from one snapshot of the store; an
// error of w's is returned as is.
func (l *Log) WriteTile(t tiles.Tile, size int64, w io.Writer) error {
	return l.db.View(func(txn Txn) error {
		cp, err := l.signedHead(txn)
		if err != nil {
			return err
		}
		if size > cp.Size {
			return fmt.Errorf("%w: tree size %d is past the signed checkpoint's %d", ErrNotFound, size, cp.Size)
		}
		return l.readTileTo(txn, t, size, w)
	})
}

func (l *Log) readTile(txn Txn, t tiles.Tile, size int64) ([]byte, error) {
	var b bytes.Buffer
	if err := l.readTileTo(txn, t, size, &b); err != nil {
		return nil, err
	}
	return append([]byte{}, b.Bytes()...), nil // empty, not nil, for a history tile one batch spans
}

// readTileTo writes the bytes of tile t (as ReadTile returns them) to w
// as it reads them; an error of w's ends the read and is returned as is.
func (l *Log) readTileTo(txn Txn, t tiles.Tile, size int64, w io.Writer) error {
	level := max(t.Level, 0)
	if t.W < 1 || t.W > tiles.Width || t.N < 0 || level > tiles.MaxLevel || t.N > (1<<62)>>(tiles.Height*(level+1)) {
		return fmt.Errorf("%w: tile %s", ErrNotFound, t.Path())
	}
	// The tile covers entries [start, end) of level 0; a partial tile
	// stays readable after its tile grows, as a published one does.
	span := int64(1) << (tiles.Height * level)
	start, end := t.N*tiles.Width*span, (t.N*tiles.Width+int64(t.W))*span
	if end > size || end/span != (t.N*tiles.Width+int64(t.W)) {
		return fmt.Errorf("%w: tile %s is not in a tree of size %d", ErrNotFound, t.Path(), size)
	}
	r := txnHashReader(txn)
	switch t.Kind {
	case tiles.KindHashTile:
		data, err := tlog.ReadTileData(tlog.Tile{H: tiles.Height, L: t.Level, N: t.N, W: t.W}, r)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	case tiles.KindEntries:
		for i := start; i < end; i++ {
			e, err := txn.Get(indexKey(prefixEntry, i))
			if err != nil {
				return &IntegrityError{Index: i, What: "entry missing", Detail: err.Error()}
			}
			leaf, err := r.ReadHashes([]int64{tlog.StoredHashIndex(0, i)})
			if err != nil {
				return err
			}
			if tlog.RecordHash(e) != leaf[0] {
				return &IntegrityError{Index: i, What: "entry", Detail: "its leaf hash is not the stored one; refusing to publish it (run `writ ledger verify`)"}
			}
			if err := writeBundleEntry(w, e, &IntegrityError{Index: i, What: "entry"}); err != nil {
				return err
			}
		}
		return nil
	case tiles.KindHistory:
		return l.readHistoryTo(txn, start, end, size, w)
	}
	return fmt.Errorf("%w: %s is not a tile", ErrNotFound, t.Path())
}

// readHistoryTo writes the history bundle of the tree sizes start+1 to
// end to w (none when one batch spans them).
func (l *Log) readHistoryTo(txn Txn, start, end, size int64, w io.Writer) error {
	if !l.history {
		return fmt.Errorf("%w: this log keeps no checkpoint history", ErrNotFound)
	}
	it := txn.Iterate([]byte{prefixHistory})
	defer it.Close()
	n := 0
	for it.Seek(historyKey(start + 1)); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != 9 || int64(binary.BigEndian.Uint64(k[1:])) > end {
			break
		}
		v, err := it.Value()
		if err != nil {
			return err
		}
		if err := writeBundleEntry(w, v, &IntegrityError{Index: -1, What: "history checkpoint"}); err != nil {
			return err
		}
		n++
	}
	if n == 0 && end == size {
		return &IntegrityError{Index: end - 1, What: "checkpoint history", Detail: ErrHistory.Error() + ": no checkpoint at the tree's size"}
	}
	return nil
}

// writeBundleEntry writes e to w framed as in a bundle (tiles.AppendBundle);
// an entry a bundle cannot carry is bad, its Detail set to why.
func writeBundleEntry(w io.Writer, e []byte, bad *IntegrityError) error {
	if len(e) == 0 || len(e) > tiles.MaxEntrySize {
		_, err := tiles.AppendBundle(nil, e) // its error says why
		bad.Detail = err.Error()
		return bad
	}
	var n [2]byte
	binary.BigEndian.PutUint16(n[:], uint16(len(e)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	_, err := w.Write(e)
	return err
}

// ReadTiles calls fn with a reader of the tiles of the tree cp signs (a
// verified checkpoint of this log: cp.Size at most the log's size), all
// read from one snapshot of the store, after checking in it that the
// stored tree of cp.Size entries has root cp.Hash (an *IntegrityError
// otherwise, and fn is not called). read returns a tile as ReadTile does;
// fn's error is returned as is.
func (l *Log) ReadTiles(cp formats.Checkpoint, fn func(read func(t tiles.Tile) ([]byte, error)) error) error {
	return l.db.View(func(txn Txn) error {
		if root, err := tlog.TreeHash(cp.Size, txnHashReader(txn)); err != nil || root != cp.Hash {
			return &IntegrityError{Index: -1, What: "stored root hash", Expected: hexHash(cp.Hash), Found: fmt.Sprint(hexHash(root), err), Detail: "the stored tree is not the signed one; refusing to publish (run `writ ledger verify`)"}
		}
		return fn(func(t tiles.Tile) ([]byte, error) { return l.readTile(txn, t, cp.Size) })
	})
}
