package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/y"
	"google.golang.org/protobuf/proto"
)

// checkStore looks at a Badger directory before Badger opens it. Badger
// removes every table file its MANIFEST does not list when it opens a
// store, read-only or not, so a damaged or replaced MANIFEST would make
// even `writ ledger verify` destroy the evidence. Under the directory lock
// Badger itself uses (flock on the directory), checkStore replays the
// MANIFEST with Badger's own reader and refuses, as an *IntegrityError,
// a store holding a table the MANIFEST does not list or listing one that
// is missing; ErrLocked when another process holds the store.
func checkStore(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
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
		return &IntegrityError{Index: -1, What: "store MANIFEST missing", Detail: fmt.Sprintf("%d table files and no MANIFEST; refusing to open (Badger would delete them)", len(tables))}
	} else if err != nil {
		return err
	}
	defer mf.Close()
	m, _, err := badger.ReplayManifestFile(mf, 0, badger.DefaultOptions(dir))
	if err != nil {
		return &IntegrityError{Index: -1, What: "store MANIFEST unreadable", Detail: err.Error() + "; refusing to open"}
	}
	for id := range tables {
		if _, ok := m.Tables[id]; !ok {
			return &IntegrityError{Index: -1, What: "store MANIFEST", Detail: fmt.Sprintf("table %06d.sst is not listed; the MANIFEST was damaged or replaced; refusing to open (Badger would delete the table)", id)}
		}
	}
	for id := range m.Tables {
		if !tables[id] {
			return &IntegrityError{Index: -1, What: "store table missing", Detail: fmt.Sprintf("the MANIFEST lists %06d.sst, which is not there", id)}
		}
		if err := checkTableFooter(filepath.Join(dir, fmt.Sprintf("%06d.sst", id))); err != nil {
			return &IntegrityError{Index: -1, What: "store table damaged", Detail: fmt.Sprintf("%06d.sst: %v; refusing to open", id, err)}
		}
	}
	return nil
}

// checkTableFooter checks a Badger table's footer the way Badger reads it
// (table.initIndex: index, index length, checksum, checksum length, from
// the end) without trusting any length, and verifies the index checksum:
// Badger itself would index out of range on a truncated or damaged table,
// and panic in a goroutine no caller can recover.
func checkTableFooter(path string) error {
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
	pos := fi.Size() - 4
	b, err := read(pos, 4)
	if err != nil {
		return err
	}
	pos -= int64(binary.BigEndian.Uint32(b))
	if b, err = read(pos, int64(binary.BigEndian.Uint32(b))); err != nil {
		return err
	}
	var sum pb.Checksum
	if err := proto.Unmarshal(b, &sum); err != nil {
		return fmt.Errorf("index checksum: %w", err)
	}
	pos -= 4
	if b, err = read(pos, 4); err != nil {
		return err
	}
	n := int64(binary.BigEndian.Uint32(b))
	if b, err = read(pos-n, n); err != nil {
		return err
	}
	if err := y.VerifyChecksum(b, &sum); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}
