package delegation

import (
	"encoding/binary"
	"fmt"
)

// contentSet maps the SHA-256 of each applied record's payload to the
// index of its entry, to refuse duplicates, in about 48 bytes per entry:
// applied entries have the indexes 0, 1, 2, ... in order, so the digests
// are a slice by index (32 bytes each), and an open-addressing table of
// int64 slots (index+1; 0 is empty), at most half full, finds a digest's
// entry by its first 8 bytes with linear probing (a Go map from the first
// 8 bytes took about 52 bytes per entry more, most of a first sync's
// memory at a million entries). Lookups compare whole digests: nothing is
// judged a duplicate on a prefix.
type contentSet struct {
	digests [][32]byte
	slots   []int64
}

func newContentSet() contentSet { return contentSet{slots: make([]int64, 1024)} }

func prefix8(d *[32]byte) uint64 { return binary.LittleEndian.Uint64(d[:8]) }

// find returns the slot holding d, or the empty slot where it would go.
func (c *contentSet) find(d *[32]byte) int {
	mask := uint64(len(c.slots) - 1)
	for h := prefix8(d) & mask; ; h = (h + 1) & mask {
		v := c.slots[h]
		if v == 0 || c.digests[v-1] == *d {
			return int(h)
		}
	}
}

// lookup returns the index of the entry whose content digest is d.
func (c *contentSet) lookup(d [32]byte) (int64, bool) {
	if v := c.slots[c.find(&d)]; v != 0 {
		return v - 1, true
	}
	return 0, false
}

// add records d as the content of entry index, with the undo steps in s's
// journal. index is always the next one: State applies entries at
// index s.size, which counts exactly the digests kept (Reset undoes both
// together, the last added first, so clearing its slot breaks no other
// digest's probe).
func (c *contentSet) add(s *State, d [32]byte, index int64) {
	if index != int64(len(c.digests)) {
		// Not reachable from any input: State's own bookkeeping broke.
		panic(fmt.Sprintf("delegation: content digest of entry %d added after %d digests", index, len(c.digests)))
	}
	if 2*(len(c.digests)+1) > len(c.slots) {
		c.grow()
	}
	appendTo(s, &c.digests, d)
	c.slots[c.find(&d)] = index + 1
	s.record(func() { c.slots[c.find(&d)] = 0 })
}

// grow doubles the table and places every digest again, in index order.
func (c *contentSet) grow() {
	c.slots = make([]int64, 2*len(c.slots))
	for i := range c.digests {
		c.slots[c.find(&c.digests[i])] = int64(i) + 1
	}
}

// Seen is a persisted set of content keys (the SHA-256 of each applied
// record's payload), each with its entry's index: what a state extended
// from a persisted one (NewStateOver) refuses duplicates against, for the
// entries it did not apply itself. ledger/stateview.Index is one.
type Seen interface {
	// Seen returns the index of the entry whose content key is content,
	// and whether there is one.
	Seen(content [32]byte) (int64, bool, error)
}

// NewStateOver returns the empty state of a reader that extends a
// persisted state: duplicates are judged against base (the entries below
// the persisted binding, and those written since Persisted) and against
// what this state applied itself; Skip moves it past entries that change
// nothing but the content keys base holds. Memory does not grow with
// base.
func NewStateOver(base Seen) *State {
	s := NewState()
	s.base, s.overlay = base, map[[32]byte]int64{}
	return s
}

// Skip moves a state over a persisted one (NewStateOver) to size to,
// past entries that change nothing but their content keys, which its
// base holds (the instructions between two marked entries). It is an
// error on any other state, while journaling, or backwards.
func (s *State) Skip(to int64) error {
	switch {
	case s.base == nil:
		return fmt.Errorf("delegation: Skip on a state without a persisted base")
	case s.journal != nil:
		return fmt.Errorf("delegation: Skip while journaling")
	case to < s.size:
		return fmt.Errorf("delegation: Skip from %d back to %d", s.size, to)
	}
	s.size = to
	return nil
}

// Persisted says every entry applied so far is in base now (written with
// its content key): later lookups go to base, and the content keys this
// state kept are dropped, so that its memory does not grow with the
// entries applied. It must not be called while journaling (between Mark
// and Settle).
func (s *State) Persisted(base Seen) {
	if s.journal != nil {
		panic("delegation: Persisted while journaling")
	}
	s.base, s.overlay, s.seen = base, map[[32]byte]int64{}, newContentSet()
}

// ContentKey returns the content key of entry i of a state that applied
// every entry from 0 itself (NewState), for persisting it; false for any
// other entry or state.
func (s *State) ContentKey(i int64) ([32]byte, bool) {
	if s.base != nil || i < 0 || i >= int64(len(s.seen.digests)) {
		return [32]byte{}, false
	}
	return s.seen.digests[i], true
}

// lookupSeen returns the index of the entry holding content: from the
// content keys this state applied, then from its base.
func (s *State) lookupSeen(content [32]byte) (int64, bool, error) {
	if s.base == nil {
		i, ok := s.seen.lookup(content)
		return i, ok, nil
	}
	if i, ok := s.overlay[content]; ok {
		return i, true, nil
	}
	return s.base.Seen(content)
}

// addSeen records content as entry index's, journaled.
func (s *State) addSeen(content [32]byte, index int64) {
	if s.base == nil {
		s.seen.add(s, content, index)
		return
	}
	setMap(s, s.overlay, content, index)
}

// Rebind moves a state over a persisted one (NewStateOver, Persisted) to
// base, the same persisted state opened again (the log it was bound to
// was closed). It is an error on a state that keeps its own content keys
// (NewState), whose base would lack them.
func (s *State) Rebind(base Seen) error {
	if s.base == nil || len(s.overlay) > 0 {
		return fmt.Errorf("delegation: Rebind of a state that is not over a persisted one")
	}
	s.base = base
	return nil
}
