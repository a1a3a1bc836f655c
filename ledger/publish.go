package ledger

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/tlog"
)

// ErrPublish is wrapped by every refusal to publish into a directory
// that holds something other than an older copy of this log.
var ErrPublish = errors.New("refusing to publish")

// Published reports what Publish did.
type Published struct {
	Before, After int64 // the published tree size before and after
	Files         int   // files written (the checkpoint included)
	Bytes         int64 // bytes written
}

// Publish writes the log, at its latest signed checkpoint, into the
// directory to as a static c2sp.org/tlog-tiles log: hash tiles, entry
// bundles and, for a log with a checkpoint history, history bundles
// (tiles.KindHistory), then the signed checkpoint, last. It is
// incremental: it reads the checkpoint already published there, which
// must verify under the log's key and have a size no larger and the
// same root at its size (else an error wrapping ErrPublish, or an
// *InconsistencyError for another tree), and writes only the tiles that
// changed since (tlog.NewTiles); a full tile already there is never
// rewritten. Every file is written to a temporary name, synced and
// renamed, so a reader sees a whole file or none, and a reader that sees
// the new checkpoint finds every tile it needs. Before writing, it checks
// that the stored tree has the signed root, and every published entry's
// leaf hash against the stored one (an *IntegrityError otherwise).
func (l *Log) Publish(to string) (Published, error) {
	return l.PublishWith(to, PublishOptions{})
}

// PublishOptions are the checks Publish makes beyond the log's own.
type PublishOptions struct {
	// Check, when set, judges the checkpoint about to be published, with
	// the witness cosignatures stored for it (CosignedCheckpoint): an
	// error refuses the publication before anything is written and is
	// returned as is. A writer checks its witness policy's quorum here.
	Check func(cosigned []byte) error
	// Progress, when set, is told the tiles written (or found already
	// there), of the tiles the new checkpoint adds.
	Progress Progress
}

// PublishWith is Publish with opts. It publishes the latest checkpoint
// with its stored witness cosignatures, read once: what opts.Check
// passed is exactly what is written.
func (l *Log) PublishWith(to string, opts PublishOptions) (Published, error) {
	var res Published
	signed, cp, err := l.signedCheckpoint()
	if err != nil {
		return res, err
	}
	if opts.Check != nil {
		if err := opts.Check(signed); err != nil {
			return res, err
		}
	}
	old, err := l.publishedSize(to, cp, signed)
	if err != nil {
		return res, err
	}
	res.Before, res.After = old, cp.Size
	todo := tlog.NewTiles(tiles.Height, old, cp.Size)
	err = l.db.View(func(txn Txn) error {
		r := txnHashReader(txn)
		if root, err := tlog.TreeHash(cp.Size, r); err != nil || root != cp.Hash {
			return &IntegrityError{Index: -1, What: "stored root hash", Expected: hexHash(cp.Hash), Found: fmt.Sprint(hexHash(root), err), Detail: "the stored tree is not the signed one; refusing to publish (run `writ ledger verify`)"}
		}
		for done, t := range todo {
			kinds := []tiles.Tile{{Kind: tiles.KindHashTile, Level: t.L, N: t.N, W: t.W}}
			if t.L == 0 {
				kinds = append(kinds, tiles.Tile{Kind: tiles.KindEntries, Level: -1, N: t.N, W: t.W})
				if l.history {
					kinds = append(kinds, tiles.Tile{Kind: tiles.KindHistory, Level: -1, N: t.N, W: t.W})
				}
			}
			for _, k := range kinds {
				name := filepath.Join(to, filepath.FromSlash(k.Path()))
				data, err := l.readTile(txn, k, cp.Size)
				if err != nil {
					return err
				}
				if k.W == tiles.Width {
					// A full tile never changes: one already there (a
					// publish interrupted before its checkpoint) must be
					// this one.
					if have, err := tiles.ReadFile(name, int64(len(data))); err == nil {
						if !bytes.Equal(have, data) {
							return fmt.Errorf("%w: %s is there and differs from this log's tile; remove it if it is not what a reader was served", ErrPublish, name)
						}
						continue
					} else if !errors.Is(err, os.ErrNotExist) {
						return fmt.Errorf("%w: %w", ErrPublish, err)
					}
				}
				if err := writeAtomic(to, name, data); err != nil {
					return err
				}
				res.Files++
				res.Bytes += int64(len(data))
			}
			opts.Progress.Report(int64(done+1), int64(len(todo))) // every tile: a publish has few
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	if err := writeAtomic(to, filepath.Join(to, "checkpoint"), signed); err != nil {
		return res, err
	}
	res.Files++
	res.Bytes += int64(len(signed))
	opts.Progress.Report(int64(len(todo)), int64(len(todo)))
	return res, nil
}

// publishedSize returns the size of the checkpoint already published at
// to (0 if none), after checking that it is this log's and a prefix of cp.
func (l *Log) publishedSize(to string, cp Checkpoint, signed []byte) (int64, error) {
	b, err := tiles.ReadFile(filepath.Join(to, "checkpoint"), MaxCheckpointSize)
	if errors.Is(err, os.ErrNotExist) {
		if entries, err := os.ReadDir(to); err == nil && len(entries) > 0 {
			return 0, fmt.Errorf("%w: %s is not empty and has no checkpoint: not a published log", ErrPublish, to)
		}
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrPublish, err)
	}
	pub, err := OpenCheckpoint(b, l.vkey)
	if err != nil {
		return 0, fmt.Errorf("%w: %s holds a checkpoint this log's key did not sign: %w", ErrPublish, to, err)
	}
	if pub.Size > cp.Size {
		return 0, &InconsistencyError{Trusted: pub, Found: cp, TrustedSigned: b, FoundSigned: signed, Why: "the published log is larger than this one: refusing to publish an older tree over it"}
	}
	root, err := l.TreeHash(pub.Size)
	if err != nil {
		return 0, err
	}
	if root != pub.Hash {
		return 0, &InconsistencyError{Trusted: pub, Found: cp, TrustedSigned: b, FoundSigned: signed, Why: "the published log forked from this one"}
	}
	return pub.Size, nil
}

// ReadTile returns the bytes of tile t of the tree of the given size,
// which must not exceed the log's signed checkpoint: a hash tile
// (tlog.ReadTileData), an entry bundle, or a history bundle (the history
// checkpoints of the sizes from N*256+1 to N*256+W, in size order: the
// batches that end in the tile, none when one batch spans it). A tile the tree does not have yet wraps ErrNotFound.
func (l *Log) ReadTile(t tiles.Tile, size int64) ([]byte, error) {
	var b bytes.Buffer
	if err := l.readTileAt(t, size, &b); err != nil {
		return nil, err
	}
	if b.Len() == 0 {
		return []byte{}, nil // a history tile one batch spans
	}
	return b.Bytes(), nil
}

// readTileAt writes tile t of the tree of the given size (as ReadTile
// returns it) to w as it reads it; an error of w's is returned as is.
func (l *Log) readTileAt(t tiles.Tile, size int64, w io.Writer) error {
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

// writeAtomic writes data to name, under the publication directory to,
// through a temporary file in the same directory, synced, then renamed
// over name (0644: published files are public). Every directory between
// to and name must be a real directory, made here if missing: a symbolic
// link planted there is refused (ErrPublish), never written through.
func writeAtomic(to, name string, data []byte) error {
	if err := realDirs(to, filepath.Dir(name)); err != nil {
		return err
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(name), ".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// realDirs makes sure dir, inside to, is reached through real
// directories only, making the missing ones.
func realDirs(to, dir string) error {
	rel, err := filepath.Rel(to, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("%w: %s is outside %s", ErrPublish, dir, to)
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	cur := to
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, os.ErrNotExist) {
			if err := os.Mkdir(cur, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%w: %s is not a directory (a symbolic link or a file is never written through)", ErrPublish, cur)
		}
	}
	return nil
}
