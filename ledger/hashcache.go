package ledger

import (
	"sync"

	"golang.org/x/mod/sumdb/tlog"
)

// Proof hash cache. An inclusion or consistency proof at a million
// entries reads about 40 stored hashes, most of them high in the tree and
// shared by every proof; each lookup in the store costs microseconds (a
// table block found, checked and decompressed). The log keeps the hashes
// of complete subtrees of at least 2^cacheMinLevel entries that proofs
// have read. A stored hash of a complete subtree within the committed log
// never changes (the log is append-only; an import or sync only ever
// drops entries past its signed checkpoint), and only hashes read from
// committed snapshots are kept.
const (
	// cacheMinLevel is the lowest tree level cached: subtrees of 16
	// entries and up, 1/8 of the stored hashes.
	cacheMinLevel = 4
	// maxCachedHashes bounds the cache (about 12 MiB at the bound); a full
	// cache is emptied and fills again.
	maxCachedHashes = 1 << 18
)

type hashCache struct {
	mu sync.RWMutex
	m  map[int64]tlog.Hash
}

// reader returns r with the cache in front of it. r must read a committed
// snapshot of this log.
func (c *hashCache) reader(r tlog.HashReader) tlog.HashReader {
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
		for j, h := range got {
			out[at[j]] = h
			if level, _ := tlog.SplitStoredHashIndex(miss[j]); level >= cacheMinLevel {
				if c.m == nil || len(c.m) >= maxCachedHashes {
					c.m = make(map[int64]tlog.Hash)
				}
				c.m[miss[j]] = h
			}
		}
		return out, nil
	})
}
