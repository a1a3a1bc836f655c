package badgerfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/writ-ledger/writ/ledger/internal/fileutil"
)

// Options are the options a log's store is opened with: synced
// writes, one version per key, checksums verified on every block read.
func Options(dir string, readOnly bool) badger.Options {
	opts := badger.DefaultOptions(dir).
		WithSyncWrites(true).
		WithLogger(nil).
		WithNumVersionsToKeep(1).
		WithMemTableSize(16 << 20).
		WithBlockCacheSize(16 << 20).
		WithValueLogFileSize(64 << 20).
		// Tables of 4 MiB at every level (Badger's default doubles the
		// size per level, to 64 MiB): a table builder allocates twice
		// its table's size and a compaction runs up to 8 of them at
		// once, so the default's memory for a write grew with the
		// log's depth (an import of a million entries: 1.5 to 2.8 GiB
		// peak). Two compactors, Badger's minimum. Existing tables
		// keep their size until compacted.
		WithBaseTableSize(4 << 20).
		WithNumCompactors(2).
		// Level 0 is compacted once it holds 40 tables (Badger's
		// default: 5), and writes wait at 80 (default 15). Every
		// batch writes the log's size key and content keys spread over
		// the key space, so each level-0 table overlaps the whole base
		// level and each level-0 compaction rewrites it. Fewer, larger
		// compactions: a first sync of a million records 36 to 30 s
		// and 1.2 GiB to 390 MiB peak, of three million 124 to 101 s
		// and 2.35 to 1.6 GiB (bench/scale.sh; LIMITATIONS).
		WithNumLevelZeroTables(40).
		WithNumLevelZeroTablesStall(80).
		// A damaged block is an error on read, never garbage or a panic.
		WithChecksumVerificationMode(options.OnBlockRead).
		WithReadOnly(readOnly)
	opts.TableSizeMultiplier = 1
	// A writer that finds level 0 one table short of compaction
	// compacts it as it closes, after the flush that completes it
	// (Badger's CompactL0OnClose): its compactors would start too late
	// for a one-shot act (Settle; a bulk writer's Close compacts level 0
	// whatever it holds).
	if n, err := LevelZeroTables(dir); err == nil && !readOnly {
		opts.CompactL0OnClose = n >= opts.NumLevelZeroTables-1
	}
	if readOnly {
		// A reader goes through the log about once: a small cache of
		// decompressed blocks is enough.
		opts = opts.WithBlockCacheSize(4 << 20)
	}
	return opts
}

// LevelZeroTables returns how many tables the MANIFEST in dir lists at
// level 0. Errors: the MANIFEST's open (os.ErrNotExist for a new store)
// or Badger's replay of it.
func LevelZeroTables(dir string) (int, error) {
	f, err := os.Open(filepath.Join(dir, badger.ManifestFilename))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	m, _, err := badger.ReplayManifestFile(f, 0, badger.DefaultOptions(dir))
	if err != nil || len(m.Levels) == 0 {
		return 0, err
	}
	return len(m.Levels[0].Tables), nil
}

// IsWriteLog reports whether name, a file of a log's store, is one of
// Badger's logs: a memtable's write-ahead log (*.mem) or a value log
// (*.vlog).
func IsWriteLog(name string) bool {
	return strings.HasSuffix(name, ".mem") || strings.HasSuffix(name, ".vlog")
}

// RemoveEmptyLogs deletes the zero-length write-ahead logs (*.mem) and
// value logs (*.vlog) a writer killed at the wrong moment leaves behind.
// Badger v4 creates either file with O_CREATE and only then sizes it, and
// deletes one by truncating it to zero before unlinking it; a SIGKILL
// between the two leaves an empty file, which Badger takes for one it is
// about to create and refuses to open the directory ("while opening fid:
// N err: Create a new file" for a memtable, `Open existing file:
// ".../000002.vlog" err: Create a new file` for a value log: the
// TestCrashConsistency failure LIMITATIONS.md recorded). A zero-length
// file holds no entry: a value log starts with a 20-byte header, a
// memtable log with its first entry. It works under the lock Badger
// itself takes (flock LOCK_EX on the directory), so a live writer's new
// file is never touched; when another process holds the lock it does
// nothing, and badger.Open then reports the lock.
func RemoveEmptyLogs(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // badger.Open reports it
	}
	var empty []string
	for _, e := range entries {
		if !IsWriteLog(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Size() == 0 {
			empty = append(empty, e.Name())
		}
	}
	if len(empty) == 0 {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil // another process holds the log
	}
	defer syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
	for _, name := range empty {
		p := filepath.Join(dir, name)
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	return d.Sync()
}

// TruncateNeeded reports whether err is Badger's refusal to open a store
// read-only whose write-ahead log ends in a torn write. Badger wraps its
// errors as text (y.Wrap formats them with %+v outside its debug mode),
// so errors.Is cannot see badger.ErrTruncateNeeded; its text can.
func TruncateNeeded(err error) bool {
	return err != nil && (errors.Is(err, badger.ErrTruncateNeeded) || strings.Contains(err.Error(), badger.ErrTruncateNeeded.Error()))
}

// OpenCheckCopy makes link (anew) a view of the store in dir without the
// tables named in unlisted and opens it: read-only through hard links, or,
// with writable, for writing (no compaction) with every file but the
// tables copied, so nothing Badger writes reaches dir's files.
func OpenCheckCopy(dir, link string, unlisted map[string]bool, writable bool) (*badger.DB, error) {
	if err := os.RemoveAll(link); err != nil { // an earlier check's
		return nil, err
	}
	if err := os.Mkdir(link, 0o700); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || unlisted[e.Name()] || e.Name() == "LOCK" || (IsWriteLog(e.Name()) && fi.Size() == 0) {
			continue
		}
		from, to := filepath.Join(dir, e.Name()), filepath.Join(link, e.Name())
		if writable && !strings.HasSuffix(e.Name(), ".sst") {
			err = fileutil.Copy(from, to)
		} else {
			err = os.Link(from, to)
		}
		if err != nil {
			return nil, err
		}
	}
	if writable {
		return badger.Open(Options(link, false).WithNumCompactors(0))
	}
	return badger.Open(Options(link, true))
}

// Written counts the bytes a process set in the store at Dir and
// releases the store's mapped pages (ReleaseMapped) each time Every of
// them were set. Badger writes every table it flushes or compacts
// through a shared mapping, so without it the pages of every table a
// long write made (an import, a first sync, a state rebuild, a
// long-running writer) would stay in the resident set, which would then
// grow with the log. Safe for concurrent use.
type Written struct {
	Dir   string
	Every int64 // bytes
	n     atomic.Int64
	total atomic.Int64
	bulk  atomic.Bool // a Bulk loaded the store (Close flattens it)
}

// Add counts n bytes set.
func (w *Written) Add(n int) { w.n.Add(int64(n)); w.total.Add(int64(n)) }

// Total returns the bytes set since the store was opened (0 for a nil
// Written).
func (w *Written) Total() int64 {
	if w == nil {
		return 0
	}
	return w.total.Load()
}

// Committed releases the mapped pages if Every bytes were set since the
// last release. A nil Written does nothing.
func (w *Written) Committed() {
	if w != nil && w.n.Load() >= w.Every {
		w.n.Store(0)
		ReleaseMapped(w.Dir)
	}
}
