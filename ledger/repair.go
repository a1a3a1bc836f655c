package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// SetAsideDir is the directory inside a ledger directory where Repair
// keeps what it moves out of the way: SetAsideDir/STAMP/ holds each
// damaged store as it was (STAMP is the repair's UTC time,
// 20261204T185000Z, with -02, -03... for more in the same second), and
// RepairRecord says what was done.
const SetAsideDir = "set-aside"

// RepairRecord is the file, in SetAsideDir/STAMP, that records a repair
// (JSON, a RepairResult); UndoRepair reads it.
const RepairRecord = "repair.json"

// undoneSuffix marks a set-aside directory whose repair was undone.
const undoneSuffix = ".undone"

// RepairOptions are Repair's parameters.
type RepairOptions struct {
	// VKeys gives, per log name ("authority", "decisions"), the verifier
	// key the repaired log must verify under; by default the key the log
	// stores, as `writ ledger verify` uses.
	VKeys map[string]string
	// Restore, when set, is how the ledger is rebuilt instead of from its
	// own files: Repair sets aside every log that does not open read-only
	// and verify, then calls Restore on the ledger directory (an import
	// of an export, with every check an import runs); on its error
	// everything is put back. Repair refuses when no log needs it.
	Restore func(dir string) error
	// Check, when set, judges each log Repair would keep by what the
	// caller trusts from outside the ledger (a first root's digest, a
	// witness policy): name is the log's ("authority", "decisions") and
	// store the store to judge, closed, which Check opens read-only: a
	// log found whole, or a rebuilt one before it takes the damaged
	// store's place. Its error ends the repair: the log judged is left as
	// it was (a rebuilt store is discarded, the damaged one put back),
	// and Repair returns the error with what it did to the logs judged
	// before (the authority log comes first). A log restored by Restore
	// is judged by Restore.
	Check func(name, store string) error
	// Now is the clock for the set-aside directory's name (default
	// time.Now).
	Now func() time.Time
}

// RepairResult is what Repair did to a ledger directory.
type RepairResult struct {
	Dir      string        `json:"dir"`
	SetAside string        `json:"set_aside"` // SetAsideDir/STAMP, where the damaged stores are kept ("" when nothing was moved)
	Logs     []RepairedLog `json:"logs"`
}

// RepairedLog is what Repair did to one log.
type RepairedLog struct {
	Name string `json:"log"` // "authority" or "decisions"
	// Action is "whole" (it opened and verified; nothing moved), "rebuilt"
	// (a new store from the damaged one's files), or "restored" (by
	// RepairOptions.Restore).
	Action     string   `json:"action"`
	Size       int64    `json:"size"`       // entries it holds now
	Checkpoint int64    `json:"checkpoint"` // the size of its signed checkpoint, which they verify against
	Skipped    []string `json:"skipped"`    // files not used because they do not read back, kept in SetAside
}

// Repair brings a ledger directory whose stores are damaged back to a
// state that verifies, without deleting anything. Each log (authority,
// decisions) that opens read-only and verifies against its signed
// checkpoint is left alone. A log that does not (damaged, or left by a
// killed writer in a state only an open for writing recovers) is moved whole into dir/SetAsideDir/STAMP/, and a new
// store is built from its files (salvage: every table that reads back, in
// a new MANIFEST; its write-ahead and value logs); the new store must
// open and verify against the log's signed checkpoint under its verifier
// key, or it is discarded, the damaged store is put back as it was, and
// Repair refuses with a *StoreError with Lost set: the entries are not
// recoverable from these files, restore from an export
// (RepairOptions.Restore) or a publication. A log that reads back whole
// but does not verify (entries changed through the store) is refused the
// same way. The result says what was done; UndoRepair(dir) undoes it.
// Errors: ErrLocked while another process has a log open; the error of
// opts.Check (see RepairOptions.Check).
func Repair(dir string, opts RepairOptions) (*RepairResult, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	res := &RepairResult{Dir: dir}
	stamp := opts.Now().UTC().Format("20060102T150405Z")
	aside := filepath.Join(dir, SetAsideDir, stamp)
	for n := 2; exists(aside) || exists(aside+undoneSuffix); n++ { // repairs within one second
		aside = filepath.Join(dir, SetAsideDir, fmt.Sprintf("%s-%02d", stamp, n))
	}
	var names []string
	for _, name := range []string{AuthorityDir, DecisionsDir} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: %s holds neither an authority nor a decisions log", ErrNotALog, dir)
	}
	if opts.Restore != nil {
		var damaged []string
		for _, name := range names {
			_, _, err := openVerify(filepath.Join(dir, name), opts.VKeys[name], true)
			if err == nil && opts.Check != nil {
				if err := opts.Check(name, filepath.Join(dir, name)); err != nil {
					return nil, err // a whole log the caller does not trust
				}
			}
			if errors.Is(err, ErrLocked) {
				return nil, err
			}
			if err != nil {
				damaged = append(damaged, name)
			}
		}
		if len(damaged) == 0 {
			return nil, fmt.Errorf("%s: every log opens and verifies: nothing to restore", dir)
		}
		return restore(dir, aside, damaged, opts.Restore)
	}
	var failed error
	for _, name := range names {
		rl, err := repairLog(dir, aside, name, opts.VKeys[name], opts.Check)
		var ce *checkError
		if errors.As(err, &ce) {
			failed = errors.Join(failed, ce.err) // nothing of this log changed; no later log is touched
			break
		}
		if err != nil {
			failed = errors.Join(failed, err)
			continue
		}
		res.Logs = append(res.Logs, rl)
		if rl.Action != "whole" {
			res.SetAside = aside
		}
	}
	if res.SetAside != "" {
		if err := writeRecord(aside, res); err != nil {
			return res, err
		}
	}
	return res, failed
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// checkError carries the error of RepairOptions.Check out of repairLog.
type checkError struct{ err error }

func (e *checkError) Error() string { return e.err.Error() }

// judge is check (RepairOptions.Check) on the log name's store, its
// error as a *checkError; nil check judges nothing.
func judge(check func(name, store string) error, name, store string) error {
	if check == nil {
		return nil
	}
	if err := check(name, store); err != nil {
		return &checkError{err}
	}
	return nil
}

// repairLog checks the log name in dir and rebuilds it if it is damaged;
// check judges the log kept (a *checkError when it refuses it).
func repairLog(dir, aside, name, vkey string, check func(name, store string) error) (RepairedLog, error) {
	store := filepath.Join(dir, name)
	rl := RepairedLog{Name: name, Action: "whole"}
	size, cp, err := openVerify(store, vkey, true)
	switch {
	case err == nil:
		rl.Size, rl.Checkpoint = size, cp
		return rl, judge(check, name, store)
	case errors.Is(err, ErrLocked) || !errors.Is(err, ErrTampered):
		return rl, err
	}
	// A *StoreError, or a log that does not verify: a table whose blocks
	// do not read back may be why (a damaged block can end an iteration
	// early); salvage leaves such tables out and verifies what remains.
	moved, err := moveAside(dir, aside, name)
	if err != nil {
		return rl, err
	}
	cand := filepath.Join(dir, "."+name+".repair")
	skipped, err := salvage(filepath.Join(aside, name), filepath.Join(aside, name+UnlistedSuffix), cand)
	if err == nil {
		size, cp, err = openVerify(cand, vkey, false)
	}
	if err == nil {
		err = judge(check, name, cand)
	}
	if err == nil {
		err = os.Rename(cand, store)
	}
	if err != nil {
		os.RemoveAll(cand) // repair's own copy; the damaged files are in aside
		if berr := putBack(dir, aside, moved); berr != nil {
			return rl, fmt.Errorf("putting the damaged store back: %w (after: %w)", berr, err)
		}
		if _, ok := err.(*checkError); ok || errors.Is(err, ErrTrust) {
			return rl, err // the caller's assertion, not the store, is refused
		}
		return rl, &StoreError{Dir: store, Lost: true, Cause: err,
			Problem: "the entries cannot be recovered from this store's files (" + why(err, cand) + "); nothing was changed"}
	}
	rl.Action, rl.Size, rl.Checkpoint, rl.Skipped = "rebuilt", size, cp, skipped
	return rl, nil
}

// why says what err found in the rebuilt store at cand, without naming
// that temporary directory.
func why(err error, cand string) string {
	var se *StoreError
	if errors.As(err, &se) && se.File == "" {
		return se.Problem
	}
	return strings.ReplaceAll(err.Error(), cand, "the rebuilt store")
}

// openVerify opens the log at store, read-only (nothing changes) or for
// writing (crash recovery), and verifies it under vkey ("" for its own);
// it returns its size and its checkpoint's.
func openVerify(store, vkey string, readOnly bool) (size, checkpoint int64, err error) {
	l, err := open(store, nil, readOnly)
	if err != nil {
		return 0, 0, err
	}
	defer l.Close()
	if vkey == "" {
		vkey = l.VerifierKey()
	}
	cp, err := l.Verify(vkey, nil)
	if err != nil {
		return 0, 0, err
	}
	return l.Size(), cp.Size, nil
}

// moveAside moves the store name of dir, and its unlisted tables, into
// aside, holding the store's lock (Badger's flock) while it does; it
// returns the names moved.
func moveAside(dir, aside, name string) ([]string, error) {
	store := filepath.Join(dir, name)
	d, err := os.Open(store)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrLocked, store)
	}
	defer syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
	if err := os.MkdirAll(aside, 0o700); err != nil {
		return nil, err
	}
	var moved []string
	for _, n := range []string{name, name + UnlistedSuffix} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			continue
		}
		if err := os.Rename(filepath.Join(dir, n), filepath.Join(aside, n)); err != nil {
			return moved, errors.Join(err, putBack(dir, aside, moved))
		}
		moved = append(moved, n)
	}
	return moved, syncDirs(dir, aside)
}

// putBack moves the names in aside back into dir.
func putBack(dir, aside string, names []string) error {
	for _, n := range names {
		if err := os.Rename(filepath.Join(aside, n), filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	os.Remove(aside) // only if empty: a repair that moved nothing leaves nothing
	os.Remove(filepath.Dir(aside))
	return syncDirs(dir)
}

// restore sets every store aside and calls fn to rebuild dir; on fn's
// error it puts them back.
func restore(dir, aside string, names []string, fn func(string) error) (*RepairResult, error) {
	var moved []string
	for _, name := range names {
		m, err := moveAside(dir, aside, name)
		moved = append(moved, m...)
		if err != nil {
			return nil, errors.Join(err, putBack(dir, aside, moved))
		}
	}
	if err := fn(dir); err != nil {
		for _, name := range names {
			if _, serr := os.Lstat(filepath.Join(dir, name)); serr == nil {
				os.Rename(filepath.Join(dir, name), filepath.Join(aside, name+".restore-failed"))
			}
		}
		return nil, errors.Join(err, putBack(dir, aside, moved))
	}
	res := &RepairResult{Dir: dir, SetAside: aside}
	for _, name := range names {
		size, cp, err := openVerify(filepath.Join(dir, name), "", true)
		if err != nil {
			return res, fmt.Errorf("the restored %s log: %w", name, err)
		}
		res.Logs = append(res.Logs, RepairedLog{Name: name, Action: "restored", Size: size, Checkpoint: cp})
	}
	return res, writeRecord(aside, res)
}

// writeRecord writes res as aside/RepairRecord.
func writeRecord(aside string, res *RepairResult) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(aside, RepairRecord), append(b, '\n'), 0o600)
}

// syncDirs fsyncs directories, so renames survive a crash.
func syncDirs(dirs ...string) error {
	for _, p := range dirs {
		d, err := os.Open(p)
		if err != nil {
			return err
		}
		err = d.Sync()
		d.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// UndoResult is what UndoRepair did.
type UndoResult struct {
	SetAside string   `json:"set_aside"` // the repair's set-aside directory, now ending in .undone
	Restored []string `json:"restored"`  // the stores put back, as they were before the repair
	Kept     []string `json:"kept"`      // what the repair had made, moved into the set-aside directory
}

// UndoRepair undoes the newest repair of dir that was not undone: each
// store it set aside goes back in place, and what the repair made in its
// place is moved into the set-aside directory (NAME.repaired), which is
// then renamed STAMP.undone. Nothing is deleted. Errors: ErrLocked while
// a log is open; ErrNoRepair when there is no repair to undo.
func UndoRepair(dir string) (*UndoResult, error) {
	aside, err := latestRepair(dir)
	if err != nil {
		return nil, err
	}
	res := &UndoResult{SetAside: aside + undoneSuffix}
	for _, name := range []string{AuthorityDir, DecisionsDir} {
		if _, err := os.Lstat(filepath.Join(aside, name)); err != nil {
			continue
		}
		for _, n := range []string{name, name + UnlistedSuffix} {
			if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
				continue
			}
			if err := moveLocked(filepath.Join(dir, n), filepath.Join(aside, n+".repaired")); err != nil {
				return res, err
			}
			res.Kept = append(res.Kept, filepath.Join(res.SetAside, n+".repaired"))
		}
		for _, n := range []string{name, name + UnlistedSuffix} {
			if _, err := os.Lstat(filepath.Join(aside, n)); err != nil {
				continue
			}
			if err := os.Rename(filepath.Join(aside, n), filepath.Join(dir, n)); err != nil {
				return res, err
			}
		}
		res.Restored = append(res.Restored, name)
	}
	if err := os.Rename(aside, aside+undoneSuffix); err != nil {
		return res, err
	}
	return res, syncDirs(dir, filepath.Dir(aside))
}

// ErrNoRepair: UndoRepair found no repair of the directory to undo.
var ErrNoRepair = errors.New("no repair to undo")

// latestRepair returns the newest dir/SetAsideDir/STAMP that holds a
// repair record and was not undone.
func latestRepair(dir string) (string, error) {
	base := filepath.Join(dir, SetAsideDir)
	entries, err := os.ReadDir(base)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	var stamps []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasSuffix(e.Name(), undoneSuffix) {
			continue
		}
		if _, err := os.Stat(filepath.Join(base, e.Name(), RepairRecord)); err == nil {
			stamps = append(stamps, e.Name())
		}
	}
	if len(stamps) == 0 {
		return "", fmt.Errorf("%w: %s holds no repair (%s/STAMP/%s) that was not undone", ErrNoRepair, dir, SetAsideDir, RepairRecord)
	}
	slices.Sort(stamps)
	return filepath.Join(base, stamps[len(stamps)-1]), nil
}

// moveLocked renames the directory from to to while holding its lock
// (Badger's flock), so that no process has the store open.
func moveLocked(from, to string) error {
	d, err := os.Open(from)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("%w: %s", ErrLocked, from)
	}
	defer syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
	return os.Rename(from, to)
}
