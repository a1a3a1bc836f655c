package repair

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/sign"
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
	// key the repaired log must verify under, parsed where the caller took
	// it in; for a log without one (or nil), the key the log stores, as
	// `writ ledger verify` uses (read from the damaged store's tables, or
	// made from the public key the directory keeps), parsed where Repair
	// reads it.
	VKeys map[string]*formats.LogKey
	// Restore, when set, is how the ledger is rebuilt instead of from its
	// own files: Repair sets aside every log that does not open read-only
	// and verify, then calls Restore on the ledger directory with the
	// keys and floors the restored logs must meet (an import of an
	// export, with every check an import runs, under trust); on its
	// error, or when a restored log does not verify under its key or does
	// not reach and extend its floors, everything is put back. Repair
	// refuses when no log needs it.
	Restore func(dir string, trust RestoreTrust) error
	// Check, when set, judges each log Repair would keep by what the
	// caller trusts from outside the ledger (a first root's digest, a
	// witness policy): name is the log's ("authority", "decisions") and
	// store the store to judge, closed, which Check opens read-only: a
	// log found whole, or a rebuilt one before it takes the damaged
	// store's place. Its error ends the repair with nothing changed, and
	// Repair returns it. A log restored by Restore is judged by Restore.
	Check func(name, store string) error
	// Now is the clock for the set-aside directory's name (default
	// time.Now).
	Now func() time.Time
}

// RestoreTrust is what the logs RepairOptions.Restore brings back must
// meet, by log name: the verifier key their checkpoints must verify under
// (RepairOptions.VKeys, else the key the directory holds for the log, or
// else its public key), and the checkpoints they must reach and extend
// (replica.Floor).
type RestoreTrust struct {
	// VKeys holds, by log name, the parsed key of each log that has one
	// (never a nil value); a log without one is in Keys.
	VKeys map[string]*formats.LogKey
	// Keys, for a log without a key in VKeys (its store lost it), is the
	// public key the directory keeps for it (checkpoint.pub, runner.pub):
	// the restored log's verifier key must hold it.
	Keys   map[string]sign.PublicKey
	Floors map[string][]replica.Floor
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
	// (a new store from the damaged one's files), "restored" (by
	// RepairOptions.Restore), or "set-aside" (damaged, and not brought
	// back by the restore: its store stays in SetAside).
	Action     string   `json:"action"`
	Size       int64    `json:"size"`       // entries it holds now
	Checkpoint int64    `json:"checkpoint"` // the size of its signed checkpoint, which they verify against
	Skipped    []string `json:"skipped"`    // files not used because they do not read back, kept in SetAside
}

// Repair brings a ledger directory whose stores are damaged back to a
// state that verifies, without deleting anything, or changes nothing.
//
// First it checks every log (authority, decisions), changing nothing: one
// that opens read-only and verifies against its signed checkpoint is left
// alone; one that does not (damaged, or left by a killed writer in a
// state only an open for writing recovers) is to be rebuilt. Its key is
// the one given (RepairOptions.VKeys), else the one the directory holds
// for it: the key its store holds, read from its tables, else the
// directory's public key for it (checkpoint.pub, runner.pub) under the
// log's origin. Then it takes the lock of every log of the directory
// (ledger.ErrLocked, nothing changed, when another process holds one).
//
// A damaged log is rebuilt from its files, beside it (salvage: every
// table that reads back, in a new MANIFEST; its write-ahead logs), and
// the rebuilt store must open, verify against its signed checkpoint under
// its key, and reach and extend every replica.Floor the directory shows (the
// newest signed checkpoint its files hold, the authority checkpoint the
// decision log recorded). Repair refuses, with a *ledger.StoreError with Lost
// set and nothing changed, when a table the MANIFEST lists is missing or
// does not read back (or any table does not, when the MANIFEST itself
// does not read back whole), when its key is not known, or when any
// rebuilt log falls short: the entries are not recoverable from these
// files; restore from an export (RepairOptions.Restore) or a
// publication. Only when every damaged log is rebuilt is each moved whole
// into dir/SetAsideDir/STAMP/ and its rebuilt store put in its place.
// With RepairOptions.Restore, the damaged logs are set aside and restored
// instead (ErrNoVKey when no key is known for one). The result says what
// was done; UndoRepair(dir) undoes it.
func Repair(dir string, opts RepairOptions) (*RepairResult, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var names []string
	for _, name := range []string{ledgerdir.AuthorityDir, ledgerdir.DecisionsDir} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: %s holds neither an authority nor a decisions log", ledger.ErrNotALog, dir)
	}
	plans, err := planRepair(dir, names, opts.VKeys)
	if err != nil {
		return nil, err
	}
	if err := judgeWhole(plans, opts.Check); err != nil {
		return nil, err
	}
	if opts.Restore != nil && !slices.ContainsFunc(plans, func(p *logPlan) bool { return !p.whole }) {
		return nil, fmt.Errorf("%s: every log opens and verifies: nothing to restore", dir)
	}
	var stores []string
	for _, p := range plans {
		stores = append(stores, p.store)
	}
	locks, err := lockStores(stores...)
	if err != nil {
		return nil, err
	}
	defer locks.release()
	stamp := opts.Now().UTC().Format("20060102T150405Z")
	aside := filepath.Join(dir, SetAsideDir, stamp)
	for n := 2; exists(aside) || exists(aside+undoneSuffix); n++ { // repairs within one second
		aside = filepath.Join(dir, SetAsideDir, fmt.Sprintf("%s-%02d", stamp, n))
	}
	if opts.Restore != nil {
		return restore(dir, aside, plans, locks, opts.Restore)
	}
	return rebuild(dir, aside, plans, opts.Check)
}

// judgeWhole runs check (RepairOptions.Check) on every log of plans found
// whole; nil check judges nothing.
func judgeWhole(plans []*logPlan, check func(name, store string) error) error {
	for _, p := range plans {
		if p.whole && check != nil {
			if err := check(p.name, p.store); err != nil {
				return err
			}
		}
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// rebuild builds every damaged log of plans anew beside it (the decision
// log first: what it records floors the authority log), and only when
// all verify, moves each damaged store into aside and its rebuilt one in
// its place; check (RepairOptions.Check) judges each rebuilt log first.
func rebuild(dir, aside string, plans []*logPlan, check func(name, store string) error) (*RepairResult, error) {
	var built []*logPlan
	defer func() {
		for _, p := range built {
			os.RemoveAll(p.cand) // repair's own copies, never renamed into place
		}
	}()
	var auth, dec *logPlan
	for _, p := range plans {
		if p.name == ledgerdir.AuthorityDir {
			auth = p
		} else {
			dec = p
		}
	}
	if dec != nil && !dec.whole {
		var decided recorded
		built = append(built, dec)
		if err := dec.build(dir, decided.entry); err != nil {
			return nil, err
		}
		if auth != nil && decided.ok {
			auth.floors = append(auth.floors, decided.fl)
		}
	}
	if auth != nil && !auth.whole {
		built = append(built, auth)
		if err := auth.build(dir, nil); err != nil {
			return nil, err
		}
	}
	for _, p := range built {
		if check != nil {
			if err := check(p.name, p.cand); err != nil {
				return nil, err // the caller's assertion refuses the rebuilt log; nothing was swapped
			}
		}
	}
	res := &RepairResult{Dir: dir}
	var moved []string
	for _, p := range plans {
		rl := RepairedLog{Name: p.name, Action: "whole", Size: p.size, Checkpoint: p.cp}
		if !p.whole {
			m, err := moveAside(dir, aside, p.name)
			moved = append(moved, m...)
			if err == nil {
				err = os.Rename(p.cand, p.store)
			}
			if err != nil {
				return nil, errors.Join(err, unswap(dir, aside, plans, moved))
			}
			rl.Action, rl.Skipped, res.SetAside = "rebuilt", p.skipped, aside
		}
		res.Logs = append(res.Logs, rl)
	}
	built = nil
	if res.SetAside == "" {
		return res, nil
	}
	return res, writeRecord(aside, res)
}

// build makes the rebuilt store of a damaged log (p.cand) and verifies it,
// passing each entry to fn; on failure it says why, as a *ledger.StoreError with
// Lost set.
func (p *logPlan) build(dir string, fn ledger.EntryFunc) error {
	p.cand = filepath.Join(dir, "."+p.name+".repair")
	lost := p.files.lost()
	if lost == "" && p.vkey == nil {
		lost = cmp.Or(p.badStored, "no file that reads back holds its verifier key")
	}
	var err error
	if lost == "" {
		if err = os.RemoveAll(p.cand); err == nil { // an earlier repair's, killed
			p.skipped, err = salvage(p.store, p.store+ledger.UnlistedSuffix, p.cand)
		}
		if err == nil {
			p.size, p.cp, err = verifyStore(p.cand, p.vkey, false, p.floors, fn)
		}
		if err == nil || errors.Is(err, ledger.ErrTrust) {
			return err // nil, or the key given (not the store) is refused
		}
		lost = why(err, p.cand)
	}
	return &ledger.StoreError{Dir: p.store, Lost: true, Cause: err,
		Problem: "the entries cannot be recovered from this store's files (" + lost + "); nothing was changed"}
}

// unswap undoes the moves of rebuild after one failed: each rebuilt store
// in place goes back to its temporary name, and the damaged stores moved
// (moved, names in aside) go back.
func unswap(dir, aside string, plans []*logPlan, moved []string) error {
	var err error
	for _, p := range plans {
		if !p.whole && slices.Contains(moved, p.name) && !exists(p.cand) {
			err = errors.Join(err, os.Rename(p.store, p.cand))
		}
	}
	return errors.Join(err, putBack(dir, aside, moved))
}

// why says what err found in the rebuilt store at cand, without naming
// that temporary directory.
func why(err error, cand string) string {
	var se *ledger.StoreError
	if errors.As(err, &se) && se.File == "" {
		return se.Problem
	}
	return strings.ReplaceAll(err.Error(), cand, "the rebuilt store")
}

// moveAside moves the store name of dir, and its unlisted tables, into
// aside (the caller holds the store's lock); it returns the names moved.
func moveAside(dir, aside, name string) ([]string, error) {
	if err := os.MkdirAll(aside, 0o700); err != nil {
		return nil, err
	}
	var moved []string
	for _, n := range []string{name, name + ledger.UnlistedSuffix} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			continue
		}
		if err := os.Rename(filepath.Join(dir, n), filepath.Join(aside, n)); err != nil {
			return moved, err
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

// restore sets every damaged store of plans aside, lets go of the locks
// of the logs left in place (the import opens them itself), and calls fn
// to rebuild dir; on fn's error, or when a restored log does not verify
// under its key or falls short of its floors, it puts them back.
func restore(dir, aside string, plans []*logPlan, locks storeLocks, fn func(string, RestoreTrust) error) (*RepairResult, error) {
	trust := RestoreTrust{VKeys: map[string]*formats.LogKey{}, Keys: map[string]sign.PublicKey{}, Floors: map[string][]replica.Floor{}}
	for _, p := range plans {
		switch {
		case p.vkey != nil:
			trust.VKeys[p.name] = p.vkey
		case !p.pub.IsZero():
			trust.Keys[p.name] = p.pub
		default:
			return nil, fmt.Errorf("%w: the %s log's store lost the verifier key it stored, and %s holds no public key for it: give the key the export's checkpoints must verify under (writ ledger repair --vkey, --decisions-vkey)", ErrNoVKey, p.name, dir)
		}
	}
	var moved []string
	for _, p := range plans {
		if p.whole {
			locks.release(p.store)
			continue
		}
		trust.Floors[p.name] = p.floors
		m, err := moveAside(dir, aside, p.name)
		moved = append(moved, m...)
		if err != nil {
			return nil, errors.Join(err, putBack(dir, aside, moved))
		}
	}
	res := &RepairResult{Dir: dir, SetAside: aside}
	err := fn(dir, trust)
	if err == nil {
		res.Logs, err = checkRestored(plans)
	}
	if err != nil {
		for _, p := range plans {
			if !p.whole && exists(p.store) {
				os.Rename(p.store, filepath.Join(aside, p.name+".restore-failed"))
			}
		}
		return nil, restoreRefusal(dir, errors.Join(err, putBack(dir, aside, moved)))
	}
	return res, writeRecord(aside, res)
}

// checkRestored checks each damaged log of plans after a restore: it
// must verify under its key and reach and extend its floors; one the
// restore did not bring back (an export without its section) stays set
// aside, but at least one must have been restored.
func checkRestored(plans []*logPlan) ([]RepairedLog, error) {
	var logs []RepairedLog
	restored := false
	for _, p := range plans {
		if p.whole {
			continue
		}
		rl := RepairedLog{Name: p.name, Action: "restored"}
		if !exists(p.store) {
			rl.Action = "set-aside"
			logs = append(logs, rl)
			continue
		}
		var err error
		if rl.Size, rl.Checkpoint, err = verifyStore(p.store, p.vkey, true, p.floors, nil); err != nil {
			return nil, fmt.Errorf("the restored %s log: %w", p.name, err)
		}
		logs = append(logs, rl)
		restored = true
	}
	if !restored {
		return nil, fmt.Errorf("%w: the export restores none of the damaged logs", replica.ErrExport)
	}
	return logs, nil
}

// restoreRefusal gives a restore refused because the restored log falls
// short of a floor (an *ledger.InconsistencyError) as a *ledger.StoreError with Lost
// set: the export cannot restore what the directory held.
func restoreRefusal(dir string, err error) error {
	var inc *ledger.InconsistencyError
	if !errors.As(err, &inc) || errors.Is(err, ledger.ErrStoreDamaged) {
		return err
	}
	return &ledger.StoreError{Dir: dir, Lost: true, Cause: err, Problem: "the export does not restore what the ledger directory held (" + err.Error() + "); nothing was changed"}
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
	SetAside string   `json:"set_aside" doc:"the repair's set-aside directory, now ending in .undone"` // the repair's set-aside directory, now ending in .undone
	Restored []string `json:"restored" doc:"the stores put back"`                                      // the stores put back, as they were before the repair
	Kept     []string `json:"kept" doc:"what the repair had made, moved into the set-aside directory"` // what the repair had made, moved into the set-aside directory
}

// UndoRepair undoes the newest repair of dir that was not undone: each
// store it set aside goes back in place, and what the repair made in its
// place is moved into the set-aside directory (NAME.repaired), which is
// then renamed STAMP.undone. Nothing is deleted. It takes the lock of
// every store it moves before it moves any. Errors: ledger.ErrLocked, nothing
// changed, while a log is open; ErrNoRepair when there is no repair to
// undo.
func UndoRepair(dir string) (*UndoResult, error) {
	aside, err := latestRepair(dir)
	if err != nil {
		return nil, err
	}
	var names, stores []string
	for _, name := range []string{ledgerdir.AuthorityDir, ledgerdir.DecisionsDir} {
		if exists(filepath.Join(aside, name)) {
			names = append(names, name)
			if exists(filepath.Join(dir, name)) {
				stores = append(stores, filepath.Join(dir, name))
			}
		}
	}
	locks, err := lockStores(stores...)
	if err != nil {
		return nil, err
	}
	defer locks.release()
	res := &UndoResult{SetAside: aside + undoneSuffix}
	for _, name := range names {
		for _, n := range []string{name, name + ledger.UnlistedSuffix} {
			if !exists(filepath.Join(dir, n)) {
				continue
			}
			if err := os.Rename(filepath.Join(dir, n), filepath.Join(aside, n+".repaired")); err != nil {
				return res, err
			}
			res.Kept = append(res.Kept, filepath.Join(res.SetAside, n+".repaired"))
		}
		for _, n := range []string{name, name + ledger.UnlistedSuffix} {
			if !exists(filepath.Join(aside, n)) {
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
