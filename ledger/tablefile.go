package ledger

import (
	"bytes"

	"github.com/dgraph-io/badger/v4/y"
	"github.com/writ-ledger/writ/ledger/internal/badgerfile"
)

// TableFile is what one Badger table file of a log's store holds of the
// log, read without opening the store (ReadTableFile): the log's metadata
// and every signed checkpoint in it. Package ledger/repair reads a
// damaged store's tables this way; the key layout stays in this package.
type TableFile struct {
	// VKey and Origin are the newest m/vkey and m/origin values the table
	// holds ("" if none), at Badger versions VKeyVersion and
	// OriginVersion (0 if none).
	VKey, Origin               string
	VKeyVersion, OriginVersion uint64
	// Signed is every signed checkpoint the table holds: the log's latest
	// (m/checkpoint) and its checkpoint history, in key order, as stored.
	Signed [][]byte
}

// Value meta bits of a Badger entry (badger/v4 value.go).
const (
	badgerBitDelete       = 1 << 0
	badgerBitValuePointer = 1 << 1
)

// ReadTableFile reads the Badger table file at path, whatever its name,
// read-only: its footer, index and every block, each block's checksum
// verified. An error means the table does not read back (damaged or not
// a table); the file is never changed.
func ReadTableFile(path string) (TableFile, error) {
	var f TableFile
	t, err := badgerfile.OpenTable(path, true)
	if err != nil {
		return f, err
	}
	defer badgerfile.CloseTable(t)
	it := t.NewIterator(0)
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		key, version := y.ParseKey(it.Key()), y.ParseTs(it.Key())
		vs := it.Value()
		if vs.Meta&(badgerBitDelete|badgerBitValuePointer) != 0 {
			continue
		}
		switch {
		case bytes.Equal(key, keyVKey) && version >= f.VKeyVersion:
			f.VKey, f.VKeyVersion = string(vs.Value), version
		case bytes.Equal(key, keyOrigin) && version >= f.OriginVersion:
			f.Origin, f.OriginVersion = string(vs.Value), version
		case bytes.Equal(key, keyCheckpoint) || (len(key) == 9 && key[0] == prefixHistory):
			f.Signed = append(f.Signed, bytes.Clone(vs.Value))
		}
	}
	return f, nil
}
