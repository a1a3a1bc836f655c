package testkit

import (
	"encoding/binary"

	"github.com/dgraph-io/badger/v4"
)

// FlipStoredEntry changes one byte in the middle of stored entry i of the
// log in dir, directly through Badger, leaving every hash and the signed
// checkpoint alone: what an attacker with write access to the disk can
// do. The log must not be open.
func FlipStoredEntry(dir string, i int64) error {
	key := make([]byte, 9)
	key[0] = 'e' // ledger's entry prefix, then the big-endian index
	binary.BigEndian.PutUint64(key[1:], uint64(i))
	return EditStore(dir, func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		v[len(v)/2] ^= 0x01
		return txn.Set(key, v)
	})
}

// EditStore runs edit in one Badger transaction on the store in dir,
// directly, as an attacker with write access to the disk would. The log
// must not be open.
func EditStore(dir string, edit func(*badger.Txn) error) error {
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Update(edit)
}
