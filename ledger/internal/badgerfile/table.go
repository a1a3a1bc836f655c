package badgerfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/dgraph-io/ristretto/v2/z"
	"google.golang.org/protobuf/proto"
)

// ErrTableFooter wraps OpenTable's error for a table whose footer or
// index does not check (checkFooter's error, which it also wraps).
var ErrTableFooter = errors.New("the table's footer or index does not check")

// OpenTable opens a Badger table file read-only, whatever its name
// (Badger takes the table's id from the name: a file set aside as
// NNNNNN.sst.1 is opened through a link named 000001.sst), reading what
// Badger reads as it opens a table (its footer, index and last block),
// and with all set, every block, each with its checksum verified; the
// caller calls CloseTable. It uses the options writ's stores are written
// with (Badger's defaults: Snappy blocks of 4 KiB).
func OpenTable(path string, all bool) (*table.Table, error) {
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
	// The footer's lengths here; the index's checksum as Badger opens it.
	if err := checkFooter(path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTableFooter, err)
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil && !errors.Is(err, z.NewFile) {
		return nil, err
	}
	t, err := openTableFile(mf)
	if err != nil && strings.Contains(err.Error(), "failed to verify checksum") {
		return nil, fmt.Errorf("%w: index: %w", ErrTableFooter, err)
	} else if err != nil {
		return nil, err
	}
	if !all {
		return t, nil
	}
	if err := verifyBlocks(t); err != nil {
		CloseTable(t)
		return nil, err
	}
	return t, nil
}

// openTableFile is table.OpenTable with writ's options, read-only, and
// Badger's panic on an index it cannot parse (it re-panics after logging
// "Recovering from initIndex crash") returned as an error.
func openTableFile(mf *z.MmapFile) (t *table.Table, err error) {
	defer func() {
		if r := recover(); r != nil {
			mf.Close(-1)
			t, err = nil, fmt.Errorf("%w: the index does not parse: %v", ErrTableFooter, r)
		}
	}()
	def := badger.DefaultOptions("")
	return table.OpenTable(mf, table.Options{ReadOnly: true, ChkMode: options.OnBlockRead,
		Compression: def.Compression, BlockSize: def.BlockSize, BloomFalsePositive: def.BloomFalsePositive})
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

// CloseTable unmaps and closes a table opened by OpenTable. Never
// Table.DecrRef: its last reference deletes the file.
func CloseTable(t *table.Table) { t.MmapFile.Close(-1) }

// ErrTableUnfinished is OpenTable's error for a table whose last
// four bytes (its checksum's length) are zero, or that is empty: Badger
// creates a table's file, sizes it and then fills it, so a writer killed
// while writing one leaves a file whose tail is zeros (or, killed before
// sizing it, an empty one). Its empty index would otherwise pass the
// checks below (the CRC of nothing is zero) and crash Badger.
var ErrTableUnfinished = errors.New("the table was never finished (its footer is zeros)")

// checkFooter checks a Badger table's footer the way Badger reads it
// (table.initIndex: index, index length, checksum, checksum length, from
// the end) without trusting any length: Badger itself would index out of
// range on a truncated or damaged table. The index's checksum is left to
// the Badger open that follows (which verifies it, and returns an error),
// after its algorithm is checked to be one Badger knows (it panics on
// another) and the index to be non-empty (an empty one, whose checksum
// matches, panics in its parser).
func checkFooter(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	read := func(at, n int64) ([]byte, error) {
		if at < 0 || n < 0 || at+n > fi.Size() {
			return nil, errors.New("a footer length exceeds the file")
		}
		b := make([]byte, n)
		_, err := f.ReadAt(b, at)
		return b, err
	}
	if fi.Size() == 0 {
		return ErrTableUnfinished // created, and killed before it was sized
	}
	pos := fi.Size() - 4
	b, err := read(pos, 4)
	if err != nil {
		return err
	}
	if binary.BigEndian.Uint32(b) == 0 {
		return ErrTableUnfinished // every finished table ends in its checksum's length
	}
	pos -= int64(binary.BigEndian.Uint32(b))
	if b, err = read(pos, int64(binary.BigEndian.Uint32(b))); err != nil {
		return err
	}
	var sum pb.Checksum
	if err := proto.Unmarshal(b, &sum); err != nil {
		return fmt.Errorf("index checksum: %w", err)
	}
	switch sum.Algo {
	case pb.Checksum_CRC32C, pb.Checksum_XXHash64:
	default:
		return fmt.Errorf("index checksum: algorithm %d is not one Badger knows", sum.Algo)
	}
	pos -= 4
	if b, err = read(pos, 4); err != nil {
		return err
	}
	if n := int64(binary.BigEndian.Uint32(b)); n == 0 || pos-n < 0 {
		return fmt.Errorf("an index length of %d, in a file of %d bytes", n, fi.Size())
	}
	return nil
}

// TableLacks reports whether the table file at path holds a key at a
// version db lacks (db has neither that version nor a newer one).
func TableLacks(db *badger.DB, path string) (bool, error) {
	t, err := OpenTable(path, true)
	if err != nil {
		return false, err
	}
	defer CloseTable(t)
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

// SetAside moves the tables ids of the store in dir into aside (made
// when missing), never over a table set aside before (NNNNNN.sst.1,
// .2, ... instead).
func SetAside(dir, aside string, ids []uint64) error {
	if err := os.MkdirAll(aside, 0o700); err != nil {
		return err
	}
	for _, id := range ids {
		name := fmt.Sprintf("%06d.sst", id)
		to := filepath.Join(aside, name)
		for n := 1; ; n++ {
			if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
				break
			}
			to = filepath.Join(aside, fmt.Sprintf("%s.%d", name, n))
		}
		if err := os.Rename(filepath.Join(dir, name), to); err != nil {
			return err
		}
	}
	return nil
}
