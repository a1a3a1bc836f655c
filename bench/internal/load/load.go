// Package load drives a benchmark's concurrent submitters: clients
// goroutines, each taking the next call as it finishes its last, as the
// submitters of a control plane would.
package load

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Drive calls do(i) for every i in [0, n) from clients goroutines and
// returns the rate (calls a second over the whole run) and each call's
// latency, indexed by i. The first error any call returns is returned,
// naming its i; the calls already started finish, no new one starts.
func Drive(n, clients int, do func(i int) error) (float64, []time.Duration, error) {
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n && failed.Load() == nil; i = int(next.Add(1) - 1) {
				t := time.Now()
				if err := do(i); err != nil {
					err = fmt.Errorf("call %d: %w", i, err)
					failed.CompareAndSwap(nil, &err)
					return
				}
				lat[i] = time.Since(t)
			}
		}()
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		return 0, nil, *err
	}
	return float64(n) / time.Since(start).Seconds(), lat, nil
}
