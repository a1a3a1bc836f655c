package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/dgraph-io/badger/v4"
	"github.com/writ-ledger/writ/ledger/internal/badgerfile"
)

// checkStore looks at a Badger directory before Badger opens it. Badger
// removes every table file its MANIFEST does not list when it opens a
// store, read-only or not, so a damaged or replaced MANIFEST would make
// even `writ ledger verify` destroy the evidence. Under the directory lock
// Badger itself uses (flock on the directory), checkStore replays the
// MANIFEST with Badger's own reader, sets aside every table the MANIFEST
// does not list (setAside; a read-only open refuses instead, saying how
// to recover), and refuses, as an *IntegrityError, a store whose MANIFEST
// lists a table that is missing or damaged, as a *StoreError; ErrLocked
// when another process holds the store. With shared set it takes the lock
// shared, as a read-only open does. Without move it only looks: unlisted
// tables are left where they are for the open that follows (openBadger).
// Before it sets a table aside, badgerfile.CheckLeftovers makes sure it holds
// nothing the store lacks; otherwise it refuses and changes nothing.
func checkStore(dir string, shared, move bool) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	how := syscall.LOCK_EX
	if shared {
		how = syscall.LOCK_SH
	}
	if err := syscall.Flock(int(d.Fd()), how|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("%w: %s", ErrLocked, dir)
		}
		return err
	}
	defer syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	tables := map[uint64]bool{}
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".sst"); ok {
			if v, err := strconv.ParseUint(id, 10, 64); err == nil {
				tables[v] = true
			}
		}
	}
	mf, err := os.Open(filepath.Join(dir, badger.ManifestFilename))
	if errors.Is(err, os.ErrNotExist) {
		if len(tables) == 0 {
			return nil // a new store
		}
		return &StoreError{Dir: dir, File: badger.ManifestFilename, Problem: fmt.Sprintf("missing, and the store holds %d tables (Badger would delete them)", len(tables))}
	} else if err != nil {
		return err
	}
	defer mf.Close()
	m, _, err := badger.ReplayManifestFile(mf, 0, badger.DefaultOptions(dir))
	if err != nil {
		return &StoreError{Dir: dir, File: badger.ManifestFilename, Problem: "does not read as a Badger MANIFEST (damaged or replaced)", Cause: err}
	}
	// Every table the MANIFEST does not list is set aside, whatever its
	// number: Badger numbers a table when it starts writing it, and its
	// compactions and flushes run concurrently, so a writer killed while
	// one was being written can leave an unlisted table older than a
	// listed one (TestCrashConsistency met it). Its data is still in the
	// tables it was compacted from or in the write-ahead log; if it is not
	// (a damaged MANIFEST), verification finds what the store lacks, and
	// the table is kept as evidence.
	var leftovers []uint64
	for id := range tables {
		if _, ok := m.Tables[id]; !ok {
			leftovers = append(leftovers, id)
		}
	}
	slices.Sort(leftovers)
	if err := checkListed(dir, m, tables); err != nil {
		return err
	}
	if err := fileProblem(dir, badgerfile.CheckLogHeaders(dir, names)); err != nil {
		return err
	}
	if len(leftovers) == 0 || (!move && !shared) {
		return nil
	}
	if !shared {
		if err := fileProblem(dir, badgerfile.CheckLeftovers(dir, leftovers)); err != nil {
			return err
		}
	}
	return setAside(dir, leftovers, shared)
}

// checkListed refuses, as a *StoreError, a store whose MANIFEST m lists a
// table that is not among tables (the ids present in dir), or a table
// that does not open: it reads what Badger reads of each table as it
// opens it (its footer, its index with its checksum, its last block) in
// this goroutine, where a table that would make Badger panic (a footer
// length past the file, an unknown checksum algorithm, an index that does
// not parse; Badger opens tables in goroutines no caller can recover) is
// an error naming it. An open for writing that failed on a table inside
// Badger would already have written to the store; a read-only open
// must not crash on a damaged or crafted file either.
func checkListed(dir string, m badger.Manifest, tables map[uint64]bool) error {
	for id := range m.Tables {
		name := fmt.Sprintf("%06d.sst", id)
		if !tables[id] {
			return &StoreError{Dir: dir, File: name, Problem: "missing: the MANIFEST lists it"}
		}
		t, err := badgerfile.OpenTable(filepath.Join(dir, name), false)
		if errors.Is(err, badgerfile.ErrTableFooter) {
			return &StoreError{Dir: dir, File: name, Problem: "damaged: its footer or index does not check", Cause: err}
		} else if err != nil {
			return &StoreError{Dir: dir, File: name, Problem: "damaged: a block of this table does not read back", Cause: err}
		}
		badgerfile.CloseTable(t)
	}
	return nil
}

// UnlistedSuffix names the directory beside a log's where tables its
// MANIFEST does not list are set aside (DIR + UnlistedSuffix).
const UnlistedSuffix = ".unlisted-tables"

// setAside moves the tables the MANIFEST does not list out of the store,
// into DIR.unlisted-tables, instead of letting Badger delete them. That
// is the shape a writer killed between writing a table and recording it
// leaves (its data is still in the tables it compacts or the write-ahead
// log Badger replays); it is also what a truncated or edited MANIFEST
// looks like, so the files are kept as evidence, and verification then
// finds what the store lacks. A read-only open cannot move files: it
// refuses, naming the table.
func setAside(dir string, ids []uint64, readOnly bool) error {
	if readOnly {
		return &StoreError{Dir: dir, File: fmt.Sprintf("%06d.sst", ids[0]), Problem: "the MANIFEST does not list this table (a writer killed while writing it, or a truncated MANIFEST); a read-only open cannot tell which"}
	}
	return badgerfile.SetAside(dir, dir+UnlistedSuffix, ids)
}

// openBadger opens (or creates) the Badger store at dir, after
// checkStore, with the options a log needs: synced writes, one version
// per key, checksums verified on every block read.
func openBadger(dir string, readOnly bool) (Store, error) {
	if err := checkStore(dir, readOnly, true); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return openChecked(dir, readOnly)
}

// openChecked is openBadger after the caller's checkStore (with move):
// an open reads each table's index once before Badger reads it.
func openChecked(dir string, readOnly bool) (Store, error) {
	if !readOnly {
		if err := badgerfile.RemoveEmptyLogs(dir); err != nil {
			return nil, fmt.Errorf("opening log %s: %w", dir, err)
		}
	} else if err := fileProblem(dir, badgerfile.EmptyLogs(dir)); err != nil {
		return nil, err
	}
	db, err := badger.Open(badgerfile.Options(dir, readOnly))
	if err != nil {
		return nil, openError(dir, err)
	}
	return badgerStore{db: db, dir: dir, written: &badgerfile.Written{Dir: dir, Every: releaseEvery}}, nil
}

// damagedTable reads every block of every table the open store uses and
// returns a *StoreError (with found, what verification found, as its
// cause) for the first that does not read back, or nil.
func (s badgerStore) damagedTable(found error) error {
	for _, ti := range s.db.Tables() {
		name := fmt.Sprintf("%06d.sst", ti.ID)
		t, err := badgerfile.OpenTable(filepath.Join(s.dir, name), true)
		if err != nil {
			return &StoreError{Dir: s.dir, File: name, Problem: "damaged: a block of this table does not read back", Cause: errors.Join(err, found)}
		}
		badgerfile.CloseTable(t)
	}
	return nil
}

// badgerStore is Store on Badger v4.
type badgerStore struct {
	db      *badger.DB
	dir     string
	written *badgerfile.Written // releases the mapped pages of what it writes
}

// releaseMapped drops the store's mapped table pages from the process's
// resident set (badgerfile.ReleaseMapped); a long read calls it as it goes.
func (s badgerStore) releaseMapped() { badgerfile.ReleaseMapped(s.dir) }

func (s badgerStore) View(fn func(Txn) error) error {
	return s.db.View(func(t *badger.Txn) error { return fn(badgerTxn{t, s.dir, nil}) })
}

func (s badgerStore) Update(fn func(Txn) error) error {
	err := s.db.Update(func(t *badger.Txn) error { return fn(badgerTxn{t, s.dir, s.written}) })
	if err == nil {
		s.written.Committed()
	}
	return badgerErr(s.dir, err)
}

func (s badgerStore) Begin() Txn {
	return badgerTxn{s.db.NewTransaction(true), s.dir, s.written}
}
func (s badgerStore) Close() error { return badgerfile.Close(s.db, s.dir, s.written) }

type badgerTxn struct {
	t       *badger.Txn
	dir     string
	written *badgerfile.Written // the store's; nil in a read-only transaction
}

// badgerErr maps Badger's errors to the Store's (ErrNoKey, ErrTxnFull) and
// a damaged block to a *StoreError (readError).
func badgerErr(dir string, err error) error {
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
		return fmt.Errorf("%w: %w", ErrNoKey, err)
	case errors.Is(err, badger.ErrTxnTooBig):
		return fmt.Errorf("%w: %w", ErrTxnFull, err)
	}
	return readError(dir, err)
}

func (t badgerTxn) Get(key []byte) (v []byte, err error) {
	defer damagedRead(t.dir, &err)
	item, err := t.t.Get(key)
	if err != nil {
		return nil, badgerErr(t.dir, err)
	}
	v, err = item.ValueCopy(nil)
	return v, badgerErr(t.dir, err)
}

// damagedRead turns a panic of Badger's read path into a *StoreError in
// *err: Badger parses a block's trailer (its entry count) before it
// checks the block's checksum, so a changed block can panic the read
// instead of failing it (badger/v4 table.(*Table).block).
func damagedRead(dir string, err *error) {
	if r := recover(); r != nil {
		*err = &StoreError{Dir: dir, Problem: "damaged: a block of a table does not read back", Cause: fmt.Errorf("%v", r)}
	}
}
func (t badgerTxn) Set(key, value []byte) error {
	if t.written != nil {
		t.written.Add(len(key) + len(value))
	}
	return badgerErr(t.dir, t.t.Set(key, value))
}
func (t badgerTxn) Delete(key []byte) error { return badgerErr(t.dir, t.t.Delete(key)) }

func (t badgerTxn) Commit() error {
	err := t.t.Commit()
	if err == nil && t.written != nil {
		t.written.Committed()
	}
	return badgerErr(t.dir, err)
}
func (t badgerTxn) Discard() { t.t.Discard() }

func (t badgerTxn) Iterate(prefix []byte) Iterator {
	opts := badger.DefaultIteratorOptions
	opts.Prefix = prefix
	it := &badgerIterator{it: t.t.NewIterator(opts), dir: t.dir}
	it.guard(it.it.Rewind)
	return it
}

// badgerIterator is Iterator on Badger. A panic of Badger's read path (a
// damaged block, see damagedRead) ends the iteration: Valid is false from
// then on and Value returns the *StoreError.
type badgerIterator struct {
	it     *badger.Iterator
	buf    []byte
	dir    string
	failed error
}

// guard runs fn, keeping a panic of Badger's as i.failed.
func (i *badgerIterator) guard(fn func()) {
	if i.failed != nil {
		return
	}
	defer damagedRead(i.dir, &i.failed)
	fn()
}

func (i *badgerIterator) Seek(key []byte) { i.guard(func() { i.it.Seek(key) }) }
func (i *badgerIterator) Next()           { i.guard(i.it.Next) }
func (i *badgerIterator) Key() []byte     { return i.it.Item().Key() }
func (i *badgerIterator) Close()          { i.it.Close() }

func (i *badgerIterator) Valid() bool {
	valid := false
	i.guard(func() { valid = i.it.Valid() })
	return valid && i.failed == nil
}

func (i *badgerIterator) Value() ([]byte, error) {
	if i.failed != nil {
		return nil, i.failed
	}
	var err error
	i.guard(func() { i.buf, err = i.it.Item().ValueCopy(i.buf[:0]) })
	if i.failed != nil {
		return nil, i.failed
	}
	return i.buf, badgerErr(i.dir, err)
}
