package verify

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
)

// replayQueue bounds the entries between the log reader and the state:
// memory stays flat whatever the log's size.
const replayQueue = 256

// parallelApply returns an entry callback that replays authority entries
// into st in log order while their signatures are verified on every core
// (delegation.Prepare against st.Directory), and a wait function that
// returns the first refusal, with its entry's index, after the last
// entry. applied, if not nil, sees each record as it is applied. A
// signature by a key the directory does not know yet when its entry is
// prepared (introduced by an entry still in flight) is verified by Apply
// instead: the result is the same, only slower.
func parallelApply(st *delegation.State, applied func(*delegation.Applied)) (ledger.EntryFunc, func() error) {
	type job struct {
		entry []byte
		slot  chan *delegation.Prepared
	}
	jobs := make(chan job, replayQueue)
	order := make(chan chan *delegation.Prepared, replayQueue)
	var failed atomic.Pointer[error]
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for j := range jobs {
				j.slot <- delegation.Prepare(j.entry, st.Directory)
			}
		}()
	}
	applierDone := make(chan struct{})
	go func() {
		defer close(applierDone)
		for slot := range order {
			p := <-slot
			if failed.Load() != nil {
				continue // drain after the first refusal
			}
			a, err := st.ApplyPrepared(p)
			if err != nil {
				failed.Store(&err)
				continue
			}
			if applied != nil {
				applied(a)
			}
		}
	}()
	fn := func(i int64, entry []byte) error {
		if e := failed.Load(); e != nil {
			return *e // stop reading: the first refusal is the answer
		}
		slot := make(chan *delegation.Prepared, 1)
		order <- slot
		jobs <- job{entry: bytes.Clone(entry), slot: slot} // the reader's buffer is reused
		return nil
	}
	var once sync.Once
	wait := func() error {
		once.Do(func() {
			close(jobs)
			close(order)
			workers.Wait()
			<-applierDone
		})
		if e := failed.Load(); e != nil {
			return *e
		}
		return nil
	}
	return fn, wait
}
