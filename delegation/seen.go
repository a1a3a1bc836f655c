package delegation

import (
	"encoding/binary"
	"fmt"
)

// contentSet maps the SHA-256 of each applied record's payload to the
// index of its entry, to refuse duplicates, in about 60 bytes per entry
// (a map keyed by the whole digest takes about 100 at a million entries,
// which was most of an audit's memory). Applied entries have the indexes
// 0, 1, 2, ... in order, so the digests are a slice by index; a map from
// each digest's first 8 bytes to the first index holding them finds the
// candidate, and the rare digests whose first 8 bytes another digest
// already holds are kept whole in a second map. Lookups compare whole
// digests: nothing is judged a duplicate on a prefix.
type contentSet struct {
	digests [][32]byte
	first   map[uint64]int64
	more    map[[32]byte]int64
}

func newContentSet() contentSet {
	return contentSet{first: map[uint64]int64{}, more: map[[32]byte]int64{}}
}

func prefix8(d *[32]byte) uint64 { return binary.LittleEndian.Uint64(d[:8]) }

// lookup returns the index of the entry whose content digest is d.
func (c *contentSet) lookup(d [32]byte) (int64, bool) {
	i, ok := c.first[prefix8(&d)]
	if !ok {
		return 0, false
	}
	if c.digests[i] == d {
		return i, true
	}
	i, ok = c.more[d]
	return i, ok
}

// add records d as the content of entry index, with the undo steps in s's
// journal. index is always the next one: State applies entries at
// index s.size, which counts exactly the digests kept (Reset undoes both
// together).
func (c *contentSet) add(s *State, d [32]byte, index int64) {
	if index != int64(len(c.digests)) {
		// Not reachable from any input: State's own bookkeeping broke.
		panic(fmt.Sprintf("delegation: content digest of entry %d added after %d digests", index, len(c.digests)))
	}
	appendTo(s, &c.digests, d)
	p := prefix8(&d)
	if _, taken := c.first[p]; taken {
		setMap(s, c.more, d, index)
		return
	}
	setMap(s, c.first, p, index)
}
