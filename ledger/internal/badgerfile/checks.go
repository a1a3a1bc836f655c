package badgerfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Problem is what a check of a store's files before Badger opens it
// found damaged or half-written (EmptyLogs, CheckLeftovers,
// CheckLogHeaders): File, a name in the store's directory ("" when no
// one file is at fault), Problem in writ's words, and Badger's or the
// file system's error as Cause, if any. Package ledger reports it as a
// *ledger.StoreError with the same fields.
type Problem struct {
	File    string
	Problem string
	Cause   error
}

// Error returns "FILE: PROBLEM" (PROBLEM alone when no file is named).
func (p *Problem) Error() string {
	if p.File == "" {
		return p.Problem
	}
	return p.File + ": " + p.Problem
}

// Unwrap returns Cause.
func (p *Problem) Unwrap() error { return p.Cause }

// EmptyLogs refuses (a *Problem), for a read-only open, a store holding a zero-length
// write-ahead or value log (what a writer killed while creating or
// deleting one leaves): Badger cannot open it read-only, and only an open
// for writing may remove it (RemoveEmptyLogs).
func EmptyLogs(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // badger.Open reports it
	}
	for _, e := range entries {
		if !IsWriteLog(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Size() == 0 {
			return &Problem{File: e.Name(), Problem: "an empty log file, left by a writer killed while creating or deleting it; an open for writing removes it (it holds no entry)"}
		}
	}
	return nil
}

// CheckLeftovers runs before an open for writing sets the unlisted
// tables ids of the store in dir aside: a table a killed writer left
// unlisted holds nothing the store lacks (its data is in the tables it
// was compacted from, or in the write-ahead log Badger replays). A table
// that holds a key at a version the store does not have, or that does not
// read back, is not such a leftover: the MANIFEST lost it, and the open
// is refused (a *Problem) with nothing changed (Repair rebuilds the MANIFEST with every
// table). The store is read as Badger would open it, without the unlisted
// tables, in a directory beside it (.NAME.check, removed after) so that
// Badger neither deletes them nor writes anything of dir's: read-only,
// through hard links; or, when the write-ahead log ends in a torn write
// that only an open for writing cuts (badger.ErrTruncateNeeded, a kill
// inside a commit), opened for writing on a copy (tables hard-linked, as
// Badger never writes a table in place; every other file copied).
func CheckLeftovers(dir string, ids []uint64) error {
	link := filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".check")
	defer os.RemoveAll(link)
	unlisted := map[string]bool{}
	for _, id := range ids {
		unlisted[fmt.Sprintf("%06d.sst", id)] = true
	}
	db, err := OpenCheckCopy(dir, link, unlisted, false)
	if TruncateNeeded(err) {
		db, err = OpenCheckCopy(dir, link, unlisted, true)
	}
	if err != nil {
		return &Problem{Problem: "the MANIFEST does not list some tables, and the store without them does not open (" + err.Error() + ")", Cause: err}
	}
	defer db.Close()
	for _, id := range ids {
		name := fmt.Sprintf("%06d.sst", id)
		lacks, err := TableLacks(db, filepath.Join(dir, name))
		switch {
		case errors.Is(err, ErrTableUnfinished):
			continue // a table a killed writer was writing: nothing listed it, nothing was in it alone
		case err != nil:
			return &Problem{File: name, Problem: "the MANIFEST does not list this table, and it does not read back (damaged)", Cause: err}
		case lacks:
			return &Problem{File: name, Problem: "the MANIFEST does not list this table, and it holds entries the store lacks (the MANIFEST was truncated or replaced)"}
		}
	}
	return nil
}

// CheckLogHeaders checks the header of each write-ahead and value log
// among names (the files of the store in dir): Badger starts each with
// the id of the key that encrypts it, 0 in writ's stores, which are not
// encrypted, and refuses the whole store when that id is one its key
// registry lacks, after an open for writing has already changed it. A
// header that names a key is a *Problem; a log that does not open, the
// file system's error.
func CheckLogHeaders(dir string, names []string) error {
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
			return &Problem{File: n, Problem: "damaged: its header names an encryption key, and writ's stores are not encrypted"}
		}
	}
	return nil
}
