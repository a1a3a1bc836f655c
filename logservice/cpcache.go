package logservice

import (
	"bytes"
	"sync"

	"github.com/writ-ledger/writ/ledger/formats"
)

// checkpointCache remembers the last few signed checkpoints a key
// verified, so that the answers of one group commit (many submissions,
// one checkpoint) cost one signature verification, not one each. An
// entry is used only for the very same bytes under the very same key.
// The zero value is empty; it is safe for concurrent use.
type checkpointCache struct {
	mu   sync.Mutex
	next int
	ents [4]struct {
		signed []byte
		key    *formats.LogKey
		cp     formats.Checkpoint
	}
}

// open is formats.OpenCheckpoint(signed, k), from the cache when the
// same bytes verified under k lately.
func (c *checkpointCache) open(signed []byte, k *formats.LogKey) (formats.Checkpoint, error) {
	c.mu.Lock()
	for _, e := range c.ents {
		if e.key == k && e.signed != nil && bytes.Equal(e.signed, signed) {
			c.mu.Unlock()
			return e.cp, nil
		}
	}
	c.mu.Unlock()
	cp, err := formats.OpenCheckpoint(signed, k)
	if err != nil {
		return cp, err
	}
	c.mu.Lock()
	e := &c.ents[c.next%len(c.ents)]
	e.signed, e.key, e.cp = bytes.Clone(signed), k, cp
	c.next++
	c.mu.Unlock()
	return cp, nil
}
