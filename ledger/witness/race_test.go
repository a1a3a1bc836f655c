package witness_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/writ-ledger/writ/ledger/witness"
	"golang.org/x/mod/sumdb/tlog"
)

// cosignedCP is a checkpoint the witness answered 200 for.
type cosignedCP struct {
	branch int // index into the branches the test submits
	size   int64
	hash   tlog.Hash
}

// checkConsistent fails the test if two cosigned checkpoints are
// inconsistent: the larger one's tree, cut at the smaller size, must have
// the smaller one's root.
func checkConsistent(t testing.TB, branches []*testLog, got []cosignedCP) {
	t.Helper()
	for i, x := range got {
		for _, y := range got[i+1:] {
			small, large := x, y
			if small.size > large.size {
				small, large = large, small
			}
			if branches[large.branch].root(t, small.size) != small.hash {
				t.Fatalf("the witness cosigned inconsistent checkpoints: size %d of branch %d and size %d of branch %d",
					small.size, small.branch, large.size, large.branch)
			}
		}
	}
}

// TestConcurrentSubmissions is the race c2sp.org/tlog-witness describes:
// many submitters, each with its own idea of the witness's size, send
// growing checkpoints of one log and of a fork of it at once. The size
// the witness holds never decreases, the final state is the largest
// cosigned checkpoint, and no two cosigned checkpoints are inconsistent.
func TestConcurrentSubmissions(t *testing.T) {
	main := newTestLog(t, "example.com/a", 1).grow(t, "a", 300)
	forked := main.fork(t, 40).grow(t, "fork", 260)
	branches := []*testLog{main, forked}
	// Checkpoints and proofs are made before the race, so that the
	// witness's lock is what is measured.
	signed := make([][]byte, 2*301)
	for b, l := range branches {
		for s := int64(0); s <= 300; s++ {
			signed[b*301+int(s)] = l.checkpoint(t, s)
		}
	}
	w := newWitness(t, t.TempDir(), main)
	url := serve(t, w)
	var (
		mu      sync.Mutex
		got     []cosignedCP
		stop    atomic.Bool
		counts  [4]atomic.Int64 // 200, 409, 422, other
		highest atomic.Int64
	)
	var polls sync.WaitGroup
	polls.Add(1)
	go func() { // the held size, read while the writers run, never goes down
		defer polls.Done()
		var last int64
		for !stop.Load() {
			_, size, err := w.Checkpoint(main.origin)
			if err != nil && !errors.Is(err, witness.ErrNotCosigned) {
				t.Error(err)
				return
			}
			if size < last {
				t.Errorf("the held size went from %d down to %d", last, size)
				return
			}
			last = size
		}
	}()
	var wg sync.WaitGroup
	client := &witness.Client{}
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			var old int64
			for range 60 {
				b := 0
				if r.IntN(4) == 0 {
					b = 1
				}
				size := old + int64(r.IntN(12))
				if size > 300 {
					size = 300
				}
				cp := signed[b*301+int(size)]
				_, err := client.AddCheckpoint(context.Background(), url, old, branches[b].proof(t, old, size), cp)
				var conflict *witness.ConflictError
				switch {
				case err == nil:
					counts[0].Add(1)
					mu.Lock()
					got = append(got, cosignedCP{branch: b, size: size, hash: branches[b].root(t, size)})
					mu.Unlock()
					old = size
					for h := highest.Load(); size > h && !highest.CompareAndSwap(h, size); h = highest.Load() {
					}
				case errors.As(err, &conflict):
					counts[1].Add(1)
					old = conflict.Size
				case errors.Is(err, witness.ErrInconsistent):
					counts[2].Add(1)
				default:
					counts[3].Add(1)
					t.Errorf("submitter %d: %v", g, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	polls.Wait()
	checkConsistent(t, branches, got)
	_, size, err := w.Checkpoint(main.origin)
	if err != nil || size != highest.Load() {
		t.Fatalf("the witness holds %d (%v); the largest cosigned checkpoint is %d", size, err, highest.Load())
	}
	if counts[0].Load() < 16 || counts[1].Load() == 0 {
		t.Fatalf("too little contention to test anything: %d cosigned, %d conflicts", counts[0].Load(), counts[1].Load())
	}
	t.Logf("%d cosigned, %d conflicts, %d inconsistent; final size %d", counts[0].Load(), counts[1].Load(), counts[2].Load(), size)
}
