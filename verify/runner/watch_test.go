package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/verify/runner"
)

// TestWatchBacksOff: a source that cannot be read fails every sync; the
// wait doubles from the period, and Watch ends with the context.
func TestWatchBacksOff(t *testing.T) {
	src, err := tiles.OpenSource(t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner.Replica{Dir: t.TempDir(), Source: src}
	ctx, cancel := context.WithCancel(context.Background())
	var waits []time.Duration
	afters := 0
	err = r.Watch(ctx, time.Millisecond, runner.WatchHooks{
		Synced: func(replica.Synced) error { t.Error("a sync from nothing succeeded"); return nil },
		Failed: func(_ error, next time.Duration) {
			if waits = append(waits, next); len(waits) == 3 {
				cancel()
			}
		},
		After: func() { afters++ },
	})
	if err != nil || len(waits) != 3 || afters != 3 {
		t.Fatalf("Watch: %v, waits %v, %d syncs", err, waits, afters)
	}
	if waits[0] != 2*time.Millisecond || waits[1] != 4*time.Millisecond || waits[2] != 8*time.Millisecond {
		t.Errorf("waits %v, want 2ms, 4ms, 8ms", waits)
	}
}
