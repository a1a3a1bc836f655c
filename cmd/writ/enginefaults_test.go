package main

import (
	"context"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/logservice"
	"github.com/writ-ledger/writ/schemas"
)

// TestEngineWritersFaults: two writer services on one engine (real
// MariaDB and versitygw) take 32 submitters' instructions, half each,
// while the engine's parts fail in turn: one writer SIGKILLed and
// started again, the database killed and restarted, the object store
// killed and restarted. A submission is answered appended, or busy (503,
// nothing appended: sent again), or, when sent again after an answer a
// fault lost, duplicate; never anything else. Afterwards every
// acknowledged record is in the log exactly once, every other at most
// once, and a replica synced from the bucket through nginx replays
// every entry (crashWorld.checkStore).
func TestEngineWritersFaults(t *testing.T) {
	w := newEngineWorld(t, "example.com/engine-faults")
	nginx := testkit.Nginx(t, filepath.Join(w.store.Root, "log"))
	const submitters = 32
	subs := w.instructions(submitters, 80)
	var urls [2]atomic.Pointer[string]
	a, ca := w.writer("W")
	b, cb := w.writer("W2")
	urls[0].Store(&ca.URL)
	urls[1].Store(&cb.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var answered atomic.Int64 // submissions answered, for the log
	bad := make(chan error, 1)
	var wg sync.WaitGroup
	hc := &http.Client{Timeout: 40 * time.Second}
	for i := range submitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next := 0; next < len(subs[i]) && ctx.Err() == nil; {
				c := &logservice.Client{URL: *urls[i%2].Load(), VKey: w.vkey, HTTP: hc}
				switch got, err := send(ctx, c, subs[i][next]); {
				case err != nil:
					select {
					case bad <- err:
					default:
					}
					return
				case got < 0:
					time.Sleep(50 * time.Millisecond)
				default:
					next++
					answered.Add(1)
				}
			}
		}()
	}
	pause := func() { time.Sleep(700 * time.Millisecond) }
	pause()
	a.Process.Signal(syscall.SIGKILL)
	a.Wait()
	t.Logf("writer W killed after %d submissions answered", answered.Load())
	pause()
	a, ca = w.writer("W")
	defer stopWriter(t, a)
	defer stopWriter(t, b)
	urls[0].Store(&ca.URL)
	pause()
	w.db.Kill()
	t.Logf("the database killed after %d submissions answered", answered.Load())
	pause()
	if err := w.db.Start(); err != nil {
		t.Fatal(err)
	}
	pause()
	w.store.Kill()
	t.Logf("the object store killed after %d submissions answered", answered.Load())
	pause()
	if err := w.store.Start(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	select {
	case err := <-bad:
		t.Fatal(err)
	default:
	}
	if ctx.Err() != nil {
		t.Fatalf("%d of %d submissions answered in 4 minutes", answered.Load(), submitters*80)
	}
	_, recs := w.batch(0)
	got, err := cb.Append(context.Background(), recs)
	if err != nil {
		t.Fatal(err)
	}
	w.waitPublished(got.Checkpoint.Size)
	entries := w.replica(nginx)
	count := map[string]int{}
	for _, e := range entries {
		count[schemas.SHA256Digest(e)]++
	}
	acked, dups := 0, 0
	for _, ss := range subs {
		for _, s := range ss {
			for _, r := range s.recs {
				switch c := count[schemas.SHA256Digest(r)]; {
				case c > 1:
					t.Fatalf("a record is in the log %d times", c)
				case (s.acked || s.dup) && c != 1:
					t.Fatalf("an acknowledged record is not in the log (acked %v, duplicate %v)", s.acked, s.dup)
				case !s.acked && !s.dup:
					t.Fatal("a submission never answered")
				}
				if s.acked {
					acked++
				} else {
					dups++
				}
			}
		}
	}
	t.Logf("%d records acknowledged, %d more answered duplicate when sent again; %d entries; none lost or twice", acked, dups, len(entries))
}
