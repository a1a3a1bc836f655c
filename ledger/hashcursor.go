package ledger

import (
	"bytes"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// hashCursor reads stored tree hashes in increasing index order with one
// iterator, for a walk over the whole log (Verify): the hashes entry i
// adds are the indexes right after those of entry i−1 (tlog's storage
// order), so a walk reads them sequentially instead of looking each up.
// A hash that is missing is reported like a failed lookup; keys under the
// hash prefix that are not hash indexes are skipped, as a lookup would
// never see them.
type hashCursor struct {
	it  Iterator
	key []byte
}

func newHashCursor(txn Txn) *hashCursor {
	return &hashCursor{it: txn.Iterate([]byte{prefixHash}), key: make([]byte, 9)}
}

// ReadHashes implements tlog.HashReader for consecutive, increasing
// indexes, each at or after the previous call's.
func (c *hashCursor) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		c.key = indexKeyInto(c.key, prefixHash, x)
		for c.it.Valid() && bytes.Compare(c.it.Key(), c.key) < 0 {
			c.it.Next()
		}
		if !c.it.Valid() || !bytes.Equal(c.it.Key(), c.key) {
			return nil, fmt.Errorf("reading tree hash %d: %w", x, ErrNoKey)
		}
		v, err := c.it.Value()
		if err != nil {
			return nil, fmt.Errorf("reading tree hash %d: %w", x, err)
		}
		if len(v) != tlog.HashSize {
			return nil, fmt.Errorf("tree hash %d is %d bytes", x, len(v))
		}
		copy(out[i][:], v)
		c.it.Next()
	}
	return out, nil
}

func (c *hashCursor) close() { c.it.Close() }
