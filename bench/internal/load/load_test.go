package load

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// TestDrive: every call made exactly once, a latency for each; an error
// is returned naming its call, and no call starts after it.
func TestDrive(t *testing.T) {
	var seen [1000]atomic.Int32
	rate, lat, err := Drive(len(seen), 16, func(i int) error { seen[i].Add(1); return nil })
	if err != nil || rate <= 0 || len(lat) != len(seen) {
		t.Fatalf("Drive: rate %v, %d latencies, %v", rate, len(lat), err)
	}
	for i := range seen {
		if n := seen[i].Load(); n != 1 {
			t.Fatalf("call %d made %d times", i, n)
		}
	}
	var calls atomic.Int32
	boom := errors.New("boom")
	_, _, err = Drive(1000, 1, func(i int) error {
		calls.Add(1)
		if i == 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "call 10") || calls.Load() != 11 {
		t.Errorf("Drive with call 10 failing: %v after %d calls; want boom naming call 10, after 11", err, calls.Load())
	}
}
