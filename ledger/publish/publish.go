package publish

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/progress"
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
func Publish(l *ledger.Log, to string) (Published, error) {
	return PublishWith(l, to, PublishOptions{})
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
	Progress progress.Func
}

// PublishWith is Publish with opts. It publishes the latest checkpoint
// with its stored witness cosignatures, read once: what opts.Check
// passed is exactly what is written.
func PublishWith(l *ledger.Log, to string, opts PublishOptions) (Published, error) {
	var res Published
	signed, cp, err := latest(l)
	if err != nil {
		return res, err
	}
	if opts.Check != nil {
		if err := opts.Check(signed); err != nil {
			return res, err
		}
	}
	old, err := publishedSize(l, to, cp, signed)
	if err != nil {
		return res, err
	}
	res.Before, res.After = old, cp.Size
	todo := tlog.NewTiles(tiles.Height, old, cp.Size)
	err = l.ReadTiles(cp, func(read func(tiles.Tile) ([]byte, error)) error {
		for done, t := range todo {
			kinds := []tiles.Tile{{Kind: tiles.KindHashTile, Level: t.L, N: t.N, W: t.W}}
			if t.L == 0 {
				kinds = append(kinds, tiles.Tile{Kind: tiles.KindEntries, Level: -1, N: t.N, W: t.W})
				if l.HasHistory() {
					kinds = append(kinds, tiles.Tile{Kind: tiles.KindHistory, Level: -1, N: t.N, W: t.W})
				}
			}
			for _, k := range kinds {
				name := filepath.Join(to, filepath.FromSlash(k.Path()))
				data, err := read(k)
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
func publishedSize(l *ledger.Log, to string, cp formats.Checkpoint, signed []byte) (int64, error) {
	b, err := tiles.ReadFile(filepath.Join(to, "checkpoint"), formats.MaxCheckpointSize)
	if errors.Is(err, os.ErrNotExist) {
		if entries, err := os.ReadDir(to); err == nil && len(entries) > 0 {
			return 0, fmt.Errorf("%w: %s is not empty and has no checkpoint: not a published log", ErrPublish, to)
		}
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrPublish, err)
	}
	pub, err := formats.OpenCheckpoint(b, l.Key())
	if err != nil {
		return 0, fmt.Errorf("%w: %s holds a checkpoint this log's key did not sign: %w", ErrPublish, to, err)
	}
	if pub.Size > cp.Size {
		return 0, &ledger.InconsistencyError{Trusted: pub, Found: cp, TrustedSigned: b, FoundSigned: signed, Why: "the published log is larger than this one: refusing to publish an older tree over it"}
	}
	root, err := l.TreeHash(pub.Size)
	if err != nil {
		return 0, err
	}
	if root != pub.Hash {
		return 0, &ledger.InconsistencyError{Trusted: pub, Found: cp, TrustedSigned: b, FoundSigned: signed, Why: "the published log forked from this one"}
	}
	return pub.Size, nil
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

// latest returns the log's latest signed checkpoint as published, with
// the witness cosignatures stored for it (CosignedCheckpoint), and as
// verified under the log's key.
func latest(l *ledger.Log) ([]byte, formats.Checkpoint, error) {
	signed, err := l.CosignedCheckpoint()
	if err != nil {
		return nil, formats.Checkpoint{}, err
	}
	cp, err := formats.OpenCheckpoint(signed, l.Key())
	return signed, cp, err
}
