package verify

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
)

// replayQueue bounds the entries between the log reader and the state:
// memory stays flat whatever the log's size.
const replayQueue = 256

// ordered returns an entry callback that runs prepare on every core and
// consume on the results one at a time, in log order (with each entry's
// accepted time), and a wait function that returns the first error
// consume returned (with the index it carries) once every entry handed
// over is done. After an error the callback returns it, so that the
// reader stops.
func ordered[T any](prepare func(entry []byte) T, consume func(i int64, v T, accepted time.Time) error) (ledger.EntryFunc, func() error) {
	type job struct {
		entry []byte
		slot  chan T
	}
	type slot struct {
		i        int64
		accepted time.Time
		ch       chan T
	}
	jobs := make(chan job, replayQueue)
	order := make(chan slot, replayQueue)
	var failed atomic.Pointer[error]
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for j := range jobs {
				j.slot <- prepare(j.entry)
			}
		}()
	}
	consumerDone := make(chan struct{})
	go func() {
		defer close(consumerDone)
		for s := range order {
			v := <-s.ch
			if failed.Load() != nil {
				continue // drain after the first error
			}
			if err := consume(s.i, v, s.accepted); err != nil {
				failed.Store(&err)
			}
		}
	}()
	fn := func(i int64, entry []byte, accepted time.Time) error {
		if e := failed.Load(); e != nil {
			return *e // stop reading: the first error is the answer
		}
		ch := make(chan T, 1)
		order <- slot{i, accepted, ch}
		jobs <- job{entry: bytes.Clone(entry), slot: ch} // the reader's buffer is reused
		return nil
	}
	var once sync.Once
	wait := func() error {
		once.Do(func() {
			close(jobs)
			close(order)
			workers.Wait()
			<-consumerDone
		})
		if e := failed.Load(); e != nil {
			return *e
		}
		return nil
	}
	return fn, wait
}

// parallelApply returns an entry callback that replays authority entries
// into st in log order, each at the time the log accepted it, while their
// signatures are verified on every core (delegation.Prepare against
// st.Directory), and a wait function that returns the first refusal, with
// its entry's index, after the last entry. applied, if not nil, sees each
// record as it is applied. A signature by a key the directory does not
// know yet when its entry is prepared (introduced by an entry still in
// flight) is verified by Apply instead: the result is the same, only
// slower.
func parallelApply(st *delegation.State, applied func(*delegation.Applied)) (ledger.EntryFunc, func() error) {
	return ordered(func(entry []byte) *delegation.Prepared { return delegation.Prepare(entry, st.Directory) },
		func(_ int64, p *delegation.Prepared, accepted time.Time) error {
			a, err := st.ApplyPrepared(p, accepted)
			if err == nil && applied != nil {
				applied(a)
			}
			return err
		})
}
