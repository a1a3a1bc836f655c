// Package hashcache keeps, in memory, the stored tree hashes that
// inclusion and consistency proofs of a log read high in its tree.
//
// A proof at a million entries reads about 40 stored hashes, most of them
// high in the tree and shared by every proof; each lookup in the store
// costs microseconds (a table block found, checked and decompressed). A
// log keeps the hashes of complete subtrees of at least 2^MinLevel
// entries that proofs have read. A stored hash of a complete subtree
// within the committed log never changes, except when an import or sync
// removes entries it copied past the signed checkpoint and could not
// prove: that empties the cache (Invalidate), and a read that began
// before it keeps nothing it read. Only hashes read from committed
// snapshots are kept.
package hashcache

import (
	"sync"

	"golang.org/x/mod/sumdb/tlog"
)

const (
	// MinLevel is the lowest tree level cached: subtrees of 8
	// entries and up, 1/8 of the stored hashes (a proof then reads about 6
	// hashes from the store instead of about 40).
	MinLevel = 3
	// maxCachedHashes bounds the cache (about 30 MiB at the bound, which
	// proofs over a log of about 2 million entries reach); a full cache is
	// emptied and fills again.
	maxCachedHashes = 1 << 19
)

// Cache is a log's cache of stored tree hashes (indexes as
// tlog.StoredHashIndex numbers them). The zero value is empty and ready;
// it is safe for concurrent use.
type Cache struct {
	mu  sync.RWMutex
	m   map[int64]tlog.Hash
	gen uint64 // incremented by Invalidate
}

// Invalidate empties the cache: stored hashes were removed.
func (c *Cache) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = nil
	c.gen++
}

// Generation returns the cache's generation; call it before the snapshot
// a reader reads is taken.
func (c *Cache) Generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// Reader returns r with the cache in front of it. r must read a committed
// snapshot of this log taken after Generation returned gen; what it reads
// is kept only if the cache was not invalidated since.
func (c *Cache) Reader(r tlog.HashReader, gen uint64) tlog.HashReader {
	return tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		var miss []int64
		var at []int
		c.mu.RLock()
		for i, x := range idx {
			if h, ok := c.m[x]; ok {
				out[i] = h
				continue
			}
			miss, at = append(miss, x), append(at, i)
		}
		c.mu.RUnlock()
		if len(miss) == 0 {
			return out, nil
		}
		got, err := r.ReadHashes(miss)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		keep := c.gen == gen // nothing was removed since this read began
		for j, h := range got {
			out[at[j]] = h
			if !keep {
				continue
			}
			if level, _ := tlog.SplitStoredHashIndex(miss[j]); level >= MinLevel {
				if c.m == nil || len(c.m) >= maxCachedHashes {
					c.m = make(map[int64]tlog.Hash)
				}
				c.m[miss[j]] = h
			}
		}
		return out, nil
	})
}

// Cached returns the indexes of the hashes the cache holds, in no order.
func (c *Cache) Cached() []int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]int64, 0, len(c.m))
	for x := range c.m {
		out = append(out, x)
	}
	return out
}
