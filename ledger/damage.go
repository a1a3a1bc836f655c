package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/dgraph-io/ristretto/v2/z"
	"github.com/writ-ledger/writ/ledger/internal/fileutil"
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
// for writing may remove it (removeEmptyLogs).
func emptyLogs(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // badger.Open reports it
	}
	for _, e := range entries {
		if !IsWriteLog(e.Name()) || !e.Type().IsRegular() {
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
	db, err := openCheckCopy(dir, link, unlisted, false)
	if truncateNeeded(err) {
		db, err = openCheckCopy(dir, link, unlisted, true)
	}
	if err != nil {
		return &StoreError{Dir: dir, Problem: "the MANIFEST does not list some tables, and the store without them does not open (" + err.Error() + ")", Cause: err}
	}
	defer db.Close()
	for _, id := range ids {
		name := fmt.Sprintf("%06d.sst", id)
		lacks, err := tableLacks(db, filepath.Join(dir, name))
		switch {
		case errors.Is(err, errTableUnfinished):
			continue // a table a killed writer was writing: nothing listed it, nothing was in it alone
		case err != nil:
			return &StoreError{Dir: dir, File: name, Problem: "the MANIFEST does not list this table, and it does not read back (damaged)", Cause: err}
		case lacks:
			return &StoreError{Dir: dir, File: name, Problem: "the MANIFEST does not list this table, and it holds entries the store lacks (the MANIFEST was truncated or replaced)"}
		}
	}
	return nil
}

// openTableFile is table.OpenTable with writ's options, read-only, and
// Badger's panic on an index it cannot parse (it re-panics after logging
// "Recovering from initIndex crash") returned as an error.
func openTableFile(mf *z.MmapFile) (t *table.Table, err error) {
	defer func() {
		if r := recover(); r != nil {
			mf.Close(-1)
			t, err = nil, fmt.Errorf("the table's index does not parse: %v", r)
		}
	}()
	def := badger.DefaultOptions("")
	return table.OpenTable(mf, table.Options{ReadOnly: true, ChkMode: options.OnBlockRead,
		Compression: def.Compression, BlockSize: def.BlockSize, BloomFalsePositive: def.BloomFalsePositive})
}

// truncateNeeded reports whether err is Badger's refusal to open a store
// read-only whose write-ahead log ends in a torn write. Badger wraps its
// errors as text (y.Wrap formats them with %+v outside its debug mode),
// so errors.Is cannot see badger.ErrTruncateNeeded; its text can.
func truncateNeeded(err error) bool {
	return err != nil && (errors.Is(err, badger.ErrTruncateNeeded) || strings.Contains(err.Error(), badger.ErrTruncateNeeded.Error()))
}

// openCheckCopy makes link (anew) a view of the store in dir without the
// tables named in unlisted and opens it: read-only through hard links, or,
// with writable, for writing (no compaction) with every file but the
// tables copied, so nothing Badger writes reaches dir's files.
func openCheckCopy(dir, link string, unlisted map[string]bool, writable bool) (*badger.DB, error) {
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
		return badger.Open(badgerOptions(link, false).WithNumCompactors(0))
	}
	return badger.Open(badgerOptions(link, true))
}

// tableLacks reports whether the table file at path holds a key at a
// version db lacks (db has neither that version nor a newer one).
func tableLacks(db *badger.DB, path string) (bool, error) {
	t, err := openTable(path, true)
	if err != nil {
		return false, err
	}
	defer closeTable(t)
	txn := db.NewTransaction(false)
	defer txn.Discard()
	opts := badger.DefaultIteratorOptions
	opts.AllVersions, opts.PrefetchValues = true, false
	dbit := txn.NewIterator(opts)
	defer dbit.Close()
	it := t.NewIterator(0)
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		key, version := y.ParseKey(it.Key()), y.ParseTs(it.Key())
		if bytes.HasPrefix(key, []byte("!badger!")) {
			continue
		}
		dbit.Seek(key)
		if !dbit.Valid() || !bytes.Equal(dbit.Item().Key(), key) || dbit.Item().Version() < version {
			return true, nil
		}
	}
	return false, nil
}

// openTable opens a Badger table file read-only, whatever its name
// (Badger takes the table's id from the name: a file set aside as
// NNNNNN.sst.1 is opened through a link named 000001.sst), reading what
// Badger reads as it opens a table (its footer, index and last block),
// and with all set, every block, each with its checksum verified; the
// caller calls closeTable. It uses the options writ's stores are written
// with (Badger's defaults: Snappy blocks of 4 KiB).
func openTable(path string, all bool) (*table.Table, error) {
	if _, ok := table.ParseFileID(filepath.Base(path)); !ok || !strings.HasSuffix(path, ".sst") {
		tmp, err := os.MkdirTemp("", "writ-table-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		link := filepath.Join(tmp, "000001.sst")
		if err := os.Symlink(abs, link); err != nil {
			return nil, err
		}
		path = link
	}
	if err := checkTableFooter(path); err != nil {
		return nil, err
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil && !errors.Is(err, z.NewFile) {
		return nil, err
	}
	t, err := openTableFile(mf)
	if err != nil {
		return nil, err
	}
	if !all {
		return t, nil
	}
	if err := verifyBlocks(t); err != nil {
		closeTable(t)
		return nil, err
	}
	return t, nil
}

// checkLogHeaders checks the header of each write-ahead and value log
// among names (the files of the store in dir): Badger starts each with
// the id of the key that encrypts it, 0 in writ's stores, which are not
// encrypted, and refuses the whole store when that id is one its key
// registry lacks, after an open for writing has already changed it.
func checkLogHeaders(dir string, names []string) error {
	for _, n := range names {
		if !IsWriteLog(n) {
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

// verifyBlocks reads every block of t, checking its checksum. Badger's
// Table.VerifyChecksum reports a damaged block by dereferencing the nil
// block it failed to read (v4.9.6, table.go:711): that panic, in this
// goroutine, is the error.
func verifyBlocks(t *table.Table) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("a block of %s does not read back (its checksum does not match)", filepath.Base(t.Filename()))
		}
	}()
	return t.VerifyChecksum()
}

// closeTable unmaps and closes a table opened by openTableFile. Never
// Table.DecrRef: its last reference deletes the file.
func closeTable(t *table.Table) { t.MmapFile.Close(-1) }
