package admission

import "testing"

// TestSlots: one client past MaxPerClient, another past the total; a
// per-client limit equal to the total is none.
func TestSlots(t *testing.T) {
	s := newSlots(3, 2)
	for i, tc := range []struct {
		pid  int32
		want string
	}{{1, ""}, {1, ""}, {1, "max-per-client"}, {2, ""}, {3, "max-in-flight"}, {1, "max-per-client"}} {
		if got := s.acquire(tc.pid); got != tc.want {
			t.Errorf("acquire %d (pid %d): %q, want %q", i, tc.pid, got, tc.want)
		}
	}
	s.release(2)
	if got := s.acquire(3); got != "" || len(s.byPID) != 2 {
		t.Errorf("after a release: %q, %d pids held; want a slot, 2 pids", got, len(s.byPID))
	}
	same := newSlots(2, 2)
	for i, want := range []string{"", "", "max-in-flight"} {
		if got := same.acquire(1); got != want {
			t.Errorf("newSlots(2, 2), acquire %d: %q, want %q", i, got, want)
		}
	}
}
