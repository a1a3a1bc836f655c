package ledger

import (
	"errors"
	"fmt"
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
func (e *StoreError) Unwrap() []error { return []error{ErrStoreDamaged, ErrTampered, e.Cause} }

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

// fileProblem returns err, a check of the store's files in dir
// (badgerfile.EmptyLogs, CheckLeftovers, CheckLogHeaders), as a
// *StoreError when it found a *badgerfile.Problem.
func fileProblem(dir string, err error) error {
	var p *badgerfile.Problem
	if errors.As(err, &p) {
		return &StoreError{Dir: dir, File: p.File, Problem: p.Problem, Cause: p.Cause}
	}
	return err
}
