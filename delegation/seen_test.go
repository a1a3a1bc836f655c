package delegation

import "testing"

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
	if _, ok := s.seen.lookup(a); ok || len(s.seen.digests) != 0 || len(s.seen.first) != 0 || len(s.seen.more) != 0 {
		t.Fatalf("the set is not empty after a reset to 0: %+v", s.seen)
	}
}
