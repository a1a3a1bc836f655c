package badgerfile

import (
	"time"

	"github.com/dgraph-io/badger/v4"
)

// SettleWithin bounds how long Settle waits for Badger's compactors: past
// it the store is closed as it is, and the next writer to close it settles
// what is left. A compaction of level 0 into the base level rewrites at
// most the base level (a few tens of MiB at writ's options), which takes a
// few seconds on the machines writ is measured on.
const SettleWithin = 30 * time.Second

// settlePoll is how often Settle looks at the levels again.
const settlePoll = 10 * time.Millisecond

// releasePoll is how often Close releases the mapped table pages while
// compactions run.
const releasePoll = 50 * time.Millisecond

// BulkBytes is what a process must have set in a store for its close to
// compact level 0 whatever it holds (Close).
const BulkBytes = 64 << 20

// Close closes a log's store db (at dir), into which this process set
// w.Total() bytes. A writer's store settles first (Settle, within
// SettleWithin). A bulk writer's (BulkBytes or more set: a first sync, an
// import, a state rebuild, a long-running writer) then compacts what is
// left at level 0 before it returns, however few tables: a first sync of
// a million records leaves 38 tables of 257 MiB there (it never reaches
// Badger's 40), and without this the next one-shot act (a runner's `ledger
// sync` from cron) paid their compaction (3.3 s and 154 MiB against
// 0.05 s and 42 MiB). It does so by opening the store again with
// CompactL0OnClose (the options of an open cannot change), best effort:
// if another process took the store in between, it is left to it. While
// it settles and closes, which is when compactions run, the pages of the
// tables Badger maps are released every 50 ms (ReleaseMapped): a
// compaction reads and writes its tables through shared mappings, and
// that compaction peaked at 717 MiB without it, 528 MiB of them those
// pages. It returns db.Close's error; a compaction that fails leaves the
// store as it was (Badger logs it, and a later writer's close tries again).
// A store a Bulk loaded compacts level 0 into its last level, with the
// rest: what was written after the load (a replica's last checkpoint and
// state index, 47 MiB at a million records).
func Close(db *badger.DB, dir string, w *Written) error {
	if db.Opts().ReadOnly {
		return db.Close()
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(releasePoll)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				ReleaseMapped(dir)
			}
		}
	}()
	defer func() { close(stop); <-done }()
	Settle(db, SettleWithin)
	compacted := db.Opts().CompactL0OnClose
	if err := db.Close(); err != nil || w == nil || (!w.bulk.Load() && (compacted || w.total.Load() < BulkBytes)) {
		return err
	}
	if n, err := LevelZeroTables(dir); err != nil || n == 0 || (n < 2 && !w.bulk.Load()) {
		return nil
	}
	opts := Options(dir, false)
	opts.CompactL0OnClose = true
	if w.bulk.Load() {
		// What transactions added after a bulk load (its last
		// checkpoint, a replica's state index) goes down to the last
		// level, where the load put everything else, in one compaction:
		// with a base level size no store reaches, the base level is the
		// last. Into Badger's base level it would sit over its target,
		// for the next writer to wait on.
		opts.BaseLevelSize = 1 << 50
	}
	if again, err := badger.Open(opts); err == nil {
		again.Close()
	}
	return nil
}

// Settle waits until Badger's own compactors, running in this process,
// have brought every level of db within the bounds they keep (Due), and
// reports whether they did within the bound given (false: it gave up, or
// the store is read-only, which compacts nothing and waits for nothing:
// true). A writer calls it before it closes its store.
//
// Why: Badger starts its compactors after a random delay of up to a
// second, and a one-shot act (`ledger append`, `admit`, `ledger sync` of a
// few records) takes tens of milliseconds, so without this no one-shot
// writer ever compacts, and each adds the small level-0 table its close
// flushes: 102 tables after 70 appends, each read by every later open,
// which grew with the number of acts without bound. With it, level 0
// stays under the 40 tables at which Badger compacts it (Options), plus
// the one a close adds; the act that finds it due waits for the
// compactors (up to their start delay, a second, and the compaction
// itself) once in about 40 acts. A long-running writer (`admission serve`,
// `ledger sync --watch`) compacts as it goes and rarely waits here.
func Settle(db *badger.DB, within time.Duration) (settled bool) {
	if db.Opts().ReadOnly {
		return true
	}
	deadline := time.Now().Add(within)
	for Due(db.Levels()) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(settlePoll)
	}
	return true
}

// Due reports whether Badger's compactors would compact one of levels
// (db.Levels()) now: level 0 once its table count reaches
// NumLevelZeroTables (Score 1 or more: Badger's first compactor always
// takes level 0 then), any other level but the last once its size, as
// Badger adjusts it against the level below, reaches its target (Adjusted
// 1 or more). These are the rules of Badger v4's runCompactor and
// pickCompactLevels.
func Due(levels []badger.LevelInfo) bool {
	for i, l := range levels {
		if i == len(levels)-1 {
			break // Badger never compacts the last level for its size
		}
		if (l.Level == 0 && l.Score >= 1) || (l.Level > 0 && l.Score >= 1 && l.Adjusted >= 1) {
			return true
		}
	}
	return false
}
