package replica

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/writ-ledger/writ/ledger"
)

// A log that a first sync or an import creates is written beside its
// place and renamed into it once all of it is stored: a kill leaves no
// log or the whole of it, never a part. Beside a log at DIR/NAME are:
//
//   - DIR/.NAME.new, the log being written (its entries bulk-loaded:
//     ledger.Log.NewBulkReplicaWriter);
//   - DIR/.NAME.new.lock, an empty file whose flock (exclusive) the
//     writer holds from before it makes DIR/.NAME.new until after the
//     rename or the removal, and removes then: Badger's own lock on the
//     store directory is released between its opens and before the
//     rename, and without this one a second first sync could remove the
//     directory in that gap and the first rename an emptied one into
//     place. A writer that locked a file no longer at that path (removed
//     by the one before it) refuses as busy.

// errAppeared is createBeside's refusal when, under the lock, the log
// is found in place: another process placed it since the caller looked.
var errAppeared = errors.New("the log appeared in place while it was being created (another sync or import made it): run again to extend it")

// newLog is a log being written beside its place, under its lock.
type newLog struct {
	dir  string   // its place
	lock *os.File // flock held on dir's lock file
}

// newReplicaDir is where a new log of dir is written: ".NAME.new" beside
// it.
func newReplicaDir(dir string) string {
	return filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".new")
}

// createBeside creates a replica log (ledger.CreateReplica) for dir beside
// it, under its lock, after removing what a killed writer left there
// (whatever it is: a directory, a file, a FIFO, a link, which is removed
// and not followed). Errors: ledger.ErrLocked while another process
// writes one; errAppeared when dir exists by the time the lock is held;
// the file system's; CreateReplica's.
func createBeside(dir, origin, vkey string, history bool) (*ledger.Log, *newLog, error) {
	dir = filepath.Clean(dir)
	tmp := newReplicaDir(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, nil, err
	}
	n, err := lockNew(dir)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Lstat(dir); err == nil {
		n.unlock()
		return nil, nil, fmt.Errorf("%w: %s", errAppeared, dir)
	}
	if err := os.RemoveAll(tmp); err != nil {
		n.unlock()
		return nil, nil, fmt.Errorf("removing what a stopped writer left at %s: %w", tmp, err)
	}
	l, err := ledger.CreateReplica(tmp, origin, vkey, history)
	if err != nil {
		os.RemoveAll(tmp)
		n.unlock()
		return nil, nil, err
	}
	return l, n, nil
}

// lockNew takes the lock of a new log at dir (clean). Errors:
// ledger.ErrLocked while another process holds it (or held it and
// removed its file since this one opened it); a lock path that is not a
// plain file, named, with what to do.
func lockNew(dir string) (*newLog, error) {
	path := newReplicaDir(dir) + ".lock"
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err == nil {
		if fi, serr := f.Stat(); serr != nil || !fi.Mode().IsRegular() {
			f.Close()
			err = errors.New("not a regular file")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s, the lock writ takes to create the log at %s: %w (when no sync or import of it is running, remove it)", path, dir, err)
	}
	busy := fmt.Errorf("%w: %s (another sync or import is creating the log at %s)", ledger.ErrLocked, path, dir)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, busy
		}
		return nil, err
	}
	held, _ := f.Stat()
	if now, err := os.Lstat(path); err != nil || !os.SameFile(held, now) {
		f.Close() // the file the lock was on was removed by the writer before
		return nil, busy
	}
	return &newLog{dir: dir, lock: f}, nil
}

// place ends the writing of l, the new log: when err is nil and l closes
// cleanly it is renamed into place (the parent directory synced), else
// removed; then the lock is released. It returns err, or what failed.
func (n *newLog) place(l *ledger.Log, err error) error {
	defer n.unlock()
	tmp := newReplicaDir(n.dir)
	if cerr := l.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing the new log: %w", cerr)
	}
	if err == nil {
		if err = os.Rename(tmp, n.dir); err == nil {
			if err = syncDir(filepath.Dir(n.dir)); err != nil {
				return fmt.Errorf("the log is in place at %s, but syncing its directory failed: %w", n.dir, err)
			}
			return nil
		}
		err = fmt.Errorf("placing the new log at %s: %w", n.dir, err)
	}
	os.RemoveAll(tmp)
	return err
}

// unlock removes the lock file, still holding its lock (a writer that
// opened it meanwhile finds it gone once it holds the lock, and refuses),
// then releases it.
func (n *newLog) unlock() {
	os.Remove(newReplicaDir(n.dir) + ".lock")
	n.lock.Close()
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
