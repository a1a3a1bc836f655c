package merkle

import (
	"bytes"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// Iterator walks a store's keys in byte order (ledger.Iterator).
type Iterator interface {
	Valid() bool
	Next()
	Key() []byte
	Value() ([]byte, error)
	Close()
}

// Cursor reads stored tree hashes in increasing index order with one
// iterator, for a walk over the whole log: the hashes entry i adds are
// the indexes right after those of entry i−1 (tlog's storage order), so
// a walk reads them sequentially instead of looking each up. A hash that
// is missing is reported like a failed lookup (wrapping Missing); keys
// under the hash prefix that are not hash indexes are skipped, as a
// lookup would never see them.
type Cursor struct {
	It      Iterator
	Key     func(dst []byte, index int64) []byte // the store key of a stored hash index
	Missing error
	key     []byte
}

// ReadHashes implements tlog.HashReader for consecutive, increasing
// indexes, each at or after the previous call's.
func (c *Cursor) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		c.key = c.Key(c.key, x)
		for c.It.Valid() && bytes.Compare(c.It.Key(), c.key) < 0 {
			c.It.Next()
		}
		if !c.It.Valid() || !bytes.Equal(c.It.Key(), c.key) {
			return nil, fmt.Errorf("reading tree hash %d: %w", x, c.Missing)
		}
		v, err := c.It.Value()
		if err != nil {
			return nil, fmt.Errorf("reading tree hash %d: %w", x, err)
		}
		if len(v) != tlog.HashSize {
			return nil, fmt.Errorf("tree hash %d is %d bytes", x, len(v))
		}
		copy(out[i][:], v)
		c.It.Next()
	}
	return out, nil
}
