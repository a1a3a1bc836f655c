package delegation

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestContentSet: digests sharing their first 8 bytes are told apart,
// each found at its own index, and a Reset undoes additions exactly.
func TestContentSet(t *testing.T) {
	s := NewState()
	d := func(first, last byte) (x [32]byte) { x[0], x[31] = first, last; return }
	a, b, c := d(1, 1), d(1, 2), d(2, 1) // a and b share the first 8 bytes
	s.Mark()
	for i, x := range [][32]byte{a, b} {
		s.seen.add(s, x, int64(i))
		s.journal = append(s.journal, s.undo)
		s.undo = nil
		s.size++
	}
	for want, x := range map[int64][32]byte{0: a, 1: b} {
		if got, ok := s.seen.lookup(x); !ok || got != want {
			t.Fatalf("lookup(%x) = %d, %v; want %d", x[:1], got, ok, want)
		}
	}
	if _, ok := s.seen.lookup(c); ok {
		t.Fatal("an absent digest was found")
	}
	if _, ok := s.seen.lookup(d(1, 3)); ok {
		t.Fatal("a digest sharing only the first 8 bytes was found")
	}
	s.Reset(1)
	if _, ok := s.seen.lookup(b); ok {
		t.Fatal("b survived the reset")
	}
	if got, ok := s.seen.lookup(a); !ok || got != 0 {
		t.Fatal("a was lost by the reset")
	}
	s.Reset(0)
	if _, ok := s.seen.lookup(a); ok || len(s.seen.digests) != 0 || slices.ContainsFunc(s.seen.slots, func(v int64) bool { return v != 0 }) {
		t.Fatalf("the set is not empty after a reset to 0: %d digests", len(s.seen.digests))
	}
}

// TestContentSetAgainstMap: random digests (a third sharing their first
// 8 bytes with another, so that probes run long), added in batches that
// are kept or reset at random across the table's growth, answer every
// lookup as a map of the digests kept does.
func TestContentSetAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := NewState()
	ref := map[[32]byte]int64{}
	var all [][32]byte
	for batch := range 400 {
		mark := s.Mark()
		var added [][32]byte
		for range 1 + rng.IntN(40) {
			var x [32]byte
			for i := range x {
				x[i] = byte(rng.Uint32())
			}
			if len(all) > 0 && rng.IntN(3) == 0 {
				copy(x[:8], all[rng.IntN(len(all))][:8])
			}
			s.seen.add(s, x, s.size)
			s.journal = append(s.journal, s.undo)
			s.undo = nil
			s.size++
			added = append(added, x)
		}
		if rng.IntN(4) == 0 {
			s.Reset(mark)
		} else {
			for i, x := range added {
				ref[x] = mark + int64(i)
			}
			all = append(all, added...)
		}
		s.Settle()
		if batch%50 == 0 || batch == 399 {
			for x, want := range ref {
				if got, ok := s.seen.lookup(x); !ok || got != want {
					t.Fatalf("batch %d: lookup = %d, %v; want %d", batch, got, ok, want)
				}
			}
			for range min(200, len(all)) {
				var x [32]byte
				copy(x[:8], all[rng.IntN(len(all))][:8])
				x[31] ^= 0xa5
				if _, ok := ref[x]; !ok {
					if _, found := s.seen.lookup(x); found {
						t.Fatalf("batch %d: an absent digest was found", batch)
					}
				}
			}
		}
	}
	if int64(len(ref)) != s.size || len(s.seen.slots) < 2*len(ref) {
		t.Fatalf("%d kept, size %d, %d slots", len(ref), s.size, len(s.seen.slots))
	}
}
