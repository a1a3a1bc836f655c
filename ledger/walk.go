package ledger

import (
	"encoding/binary"
	"fmt"
)

// WalkFunc is called by Walk with entry i's bytes and, when entry i
// starts a batch of a log with a checkpoint history, that batch's
// history checkpoint as stored (nil otherwise). Both are valid only
// until WalkFunc returns.
type WalkFunc func(i int64, entry, history []byte) error

// Walk calls fn with the entries 0 to n-1 in order, in one read
// transaction, each with the history checkpoint of the batch it starts
// (HistoryCovering's, when entry i starts its batch), at a cost per entry that does not
// grow with the log and in memory that does not grow with n: what an
// export reads. It checks nothing but that every entry and history
// checkpoint is stored. Errors: an entry below n missing (the store lost
// it: an *IntegrityError, "entry missing", as Verify's; a *StoreError
// naming the table when one does not read back) or no history
// checkpoint covering an entry (an *IntegrityError, as
// HistoryCovering's), Badger's, fn's.
func (l *Log) Walk(n int64, fn WalkFunc) error {
	return l.diagnose(l.db.View(func(txn Txn) error {
		it := txn.Iterate([]byte{prefixEntry})
		defer it.Close()
		var hist Iterator
		if l.history {
			hist = txn.Iterate([]byte{prefixHistory})
			defer hist.Close()
		}
		release, _ := l.db.(interface{ releaseMapped() })
		// The first release, before any entry, drops the pages of the
		// tables' indexes that opening the store verified (about 14 MiB
		// at a million entries).
		read := walkReleaseEvery
		for i := int64(0); i < n; i++ {
			if release != nil && read >= walkReleaseEvery {
				release.releaseMapped()
				read = 0
			}
			if !it.Valid() || !keyIs(it.Key(), prefixEntry, i) {
				return &IntegrityError{Index: i, What: "entry missing", Detail: fmt.Sprintf("the store lacks it, and the log holds %d entries", l.Size())}
			}
			var h []byte
			if hist != nil {
				var err error
				if h, err = batchStart(hist, i); err != nil {
					return err
				}
			}
			e, err := it.Value()
			if err != nil {
				return err
			}
			read += len(e) + len(h)
			if err := fn(i, e, h); err != nil {
				return err
			}
			it.Next()
		}
		return nil
	}))
}

// walkReleaseEvery is how many bytes of the log Walk reads between two
// releases of the store's mapped pages (see releaseMapped): a quarter of
// Verify's, for an export's resident set is little else.
const walkReleaseEvery = releaseEvery / 4

// keyIs reports whether k is the key of index i under prefix.
func keyIs(k []byte, prefix byte, i int64) bool {
	return len(k) == 9 && k[0] == prefix && int64(binary.BigEndian.Uint64(k[1:])) == i
}

// historySize is the size a history key names (-1 for a malformed key).
func historySize(k []byte) int64 {
	if len(k) != 9 {
		return -1
	}
	return int64(binary.BigEndian.Uint64(k[1:]))
}

// batchStart returns, from the history iterator it (left at the first
// checkpoint of a size of at least i, as the walk moves it), the history
// checkpoint of the batch that starts at entry i, or nil when entry i
// does not start one: HistoryCovering without a seek.
func batchStart(it Iterator, i int64) ([]byte, error) {
	for it.Valid() && historySize(it.Key()) < i {
		it.Next()
	}
	starts := i == 0
	if i > 0 && it.Valid() && historySize(it.Key()) == i {
		starts = true
		it.Next()
	}
	for i == 0 && it.Valid() && historySize(it.Key()) <= 0 {
		it.Next()
	}
	if !starts {
		return nil, nil
	}
	if !it.Valid() {
		return nil, &IntegrityError{Index: i, What: "checkpoint history", Detail: ErrHistory.Error() + ": no checkpoint covers the entry"}
	}
	return it.Value()
}
