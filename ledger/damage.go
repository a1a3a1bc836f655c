package ledger

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/dgraph-io/badger/v4/y"
	"github.com/writ-ledger/writ/ledger/internal/badgerfile"
	"github.com/writ-ledger/writ/rules"
)

// ErrStoreDamaged is wrapped by every refusal to open or read a log whose
// Badger store is damaged or was left half-written: a MANIFEST missing,
// truncated or not listing tables that hold data, a table missing or
// changed, a value or write-ahead log that Badger cannot open, metadata
// the store lost. A *StoreError says which file and what; it also wraps
// ErrTampered, so callers that treat tamper evidence as a verdict of no
// keep doing so. `writ ledger repair` (Repair) is the next act.
var ErrStoreDamaged = errors.New("log store damaged")

// StoreError is a refusal to use a log's Badger store. Nothing in the
// store was changed by the refused open.
type StoreError struct {
	Dir     string // the log's store directory
	File    string // the file at fault, a name inside Dir ("" when no one file is)
	Problem string // what is wrong, in writ's words
	// Lost is set when Repair found that the entries cannot be recovered
	// from this store: it must be restored from an export or a sync.
	Lost  bool
	Cause error // Badger's or the file system's error, if any (not in the message)
}

// Rule returns the rule the refusal names: rules.StoreUnrecovered when
// Lost, else rules.StoreDamaged.
func (e *StoreError) Rule() string {
	if e.Lost {
		return rules.StoreUnrecovered
	}
	return rules.StoreDamaged
}

// Error returns "RULE: DIR/FILE: PROBLEM".
func (e *StoreError) Error() string {
	where := e.Dir
	if e.File != "" {
		where = filepath.Join(e.Dir, e.File)
	}
	return fmt.Sprintf("%s: %s: %s", e.Rule(), where, e.Problem)
}

// Unwrap returns ErrStoreDamaged, ErrTampered and the cause.
func (e *StoreError) Unwrap() []error {
	return []error{ErrStoreDamaged, ErrTampered, e.Cause}
}

// badgerFile finds the name of a store file in a Badger error message.
var badgerFile = regexp.MustCompile(`\b(\d+\.(?:vlog|sst|mem)|MANIFEST|KEYREGISTRY|DISCARD)\b`)

// openError turns an error from badger.Open into a *StoreError naming
// the file Badger named, except for the errors that are not damage (the
// directory lock, permissions, a missing directory).
func openError(dir string, err error) error {
	if strings.Contains(err.Error(), "Cannot acquire directory lock") {
		return fmt.Errorf("%w: %s", ErrLocked, dir)
	}
	if errors.Is(err, os.ErrPermission) || errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("opening log %s: %w", dir, err)
	}
	file := badgerFile.FindString(err.Error())
	problem := "Badger cannot open the store (a file damaged, or left half-written by a crash)"
	switch {
	case strings.HasSuffix(file, ".sst") && strings.Contains(err.Error(), "failed to verify checksum for table"):
		problem = "damaged: its footer or index does not check"
	case strings.HasSuffix(file, ".sst"):
		problem = "damaged: a block of this table does not read back"
	case strings.HasSuffix(file, ".vlog"), strings.HasSuffix(file, ".mem"):
		problem = "Badger cannot open this log file (damaged, or left half-written by a crash)"
	}
	return &StoreError{Dir: dir, File: file, Problem: problem, Cause: err}
}

// readError turns an error reading the open store into a *StoreError
// when it is a damaged block (a checksum that does not match, a block
// that does not decode), and returns any other error as is.
func readError(dir string, err error) error {
	if err == nil || errors.Is(err, ErrStoreDamaged) {
		return err
	}
	// Badger wraps y.ErrChecksumMismatch with pkg/errors in some paths
	// and formats it into a new error in others: the text is the test.
	if errors.Is(err, y.ErrChecksumMismatch) || strings.Contains(err.Error(), "checksum") {
		return &StoreError{Dir: dir, File: badgerFile.FindString(err.Error()), Problem: "a block of the store does not read back as written", Cause: err}
	}
	return err
}

// emptyLogs refuses, for a read-only open, a store holding a zero-length
// write-ahead or value log (what a writer killed while creating or
// deleting one leaves): Badger cannot open it read-only, and only an open
// for writing may remove it (badgerfile.RemoveEmptyLogs).
func emptyLogs(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // badger.Open reports it
	}
	for _, e := range entries {
		if !badgerfile.IsWriteLog(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Size() == 0 {
			return &StoreError{Dir: dir, File: e.Name(), Problem: "an empty log file, left by a writer killed while creating or deleting it; an open for writing removes it (it holds no entry)"}
		}
	}
	return nil
}

// checkLeftovers runs before an open for writing sets the unlisted
// tables ids of the store in dir aside: a table a killed writer left
// unlisted holds nothing the store lacks (its data is in the tables it
// was compacted from, or in the write-ahead log Badger replays). A table
// that holds a key at a version the store does not have, or that does not
// read back, is not such a leftover: the MANIFEST lost it, and the open
// is refused with nothing changed (Repair rebuilds the MANIFEST with every
// table). The store is read as Badger would open it, without the unlisted
// tables, in a directory beside it (.NAME.check, removed after) so that
// Badger neither deletes them nor writes anything of dir's: read-only,
// through hard links; or, when the write-ahead log ends in a torn write
// that only an open for writing cuts (badger.ErrTruncateNeeded, a kill
// inside a commit), opened for writing on a copy (tables hard-linked, as
// Badger never writes a table in place; every other file copied).
func checkLeftovers(dir string, ids []uint64) error {
	link := filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".check")
	defer os.RemoveAll(link)
	unlisted := map[string]bool{}
	for _, id := range ids {
		unlisted[fmt.Sprintf("%06d.sst", id)] = true
	}
	db, err := badgerfile.OpenCheckCopy(dir, link, unlisted, false)
	if badgerfile.TruncateNeeded(err) {
		db, err = badgerfile.OpenCheckCopy(dir, link, unlisted, true)
	}
	if err != nil {
		return &StoreError{Dir: dir, Problem: "the MANIFEST does not list some tables, and the store without them does not open (" + err.Error() + ")", Cause: err}
	}
	defer db.Close()
	for _, id := range ids {
		name := fmt.Sprintf("%06d.sst", id)
		lacks, err := badgerfile.TableLacks(db, filepath.Join(dir, name))
		switch {
		case errors.Is(err, badgerfile.ErrTableUnfinished):
			continue // a table a killed writer was writing: nothing listed it, nothing was in it alone
		case err != nil:
			return &StoreError{Dir: dir, File: name, Problem: "the MANIFEST does not list this table, and it does not read back (damaged)", Cause: err}
		case lacks:
			return &StoreError{Dir: dir, File: name, Problem: "the MANIFEST does not list this table, and it holds entries the store lacks (the MANIFEST was truncated or replaced)"}
		}
	}
	return nil
}

// checkLogHeaders checks the header of each write-ahead and value log
// among names (the files of the store in dir): Badger starts each with
// the id of the key that encrypts it, 0 in writ's stores, which are not
// encrypted, and refuses the whole store when that id is one its key
// registry lacks, after an open for writing has already changed it.
func checkLogHeaders(dir string, names []string) error {
	for _, n := range names {
		if !badgerfile.IsWriteLog(n) {
			continue
		}
		f, err := os.Open(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		var h [8]byte
		_, err = io.ReadFull(f, h[:])
		f.Close()
		if err == nil && h != [8]byte{} {
			return &StoreError{Dir: dir, File: n, Problem: "damaged: its header names an encryption key, and writ's stores are not encrypted"}
		}
	}
	return nil
}
