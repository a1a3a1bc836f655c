// Package replay runs the entry callbacks of a log's verification on
// every core while keeping their effects in log order: the authority
// replay that the engine, the runner's replica and import, and the audit
// share, and the strict decoding of decision records.
package replay

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/schemas"
)

// replayQueue bounds the entries between the log reader and the state:
// memory stays flat whatever the log's size.
const replayQueue = 256

// Ordered returns an entry callback that runs prepare on every core and
// consume on the results one at a time, in log order (with each entry's
// accepted time), and a wait function that returns the first error
// consume returned (with the index it carries) once every entry handed
// over is done. After an error the callback returns it, so that the
// reader stops.
func Ordered[T any](prepare func(entry []byte) T, consume func(i int64, v T, accepted time.Time) error) (ledger.EntryFunc, func() error) {
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

// Apply returns an entry callback that replays authority entries
// into st in log order, each at the time the log accepted it, while their
// signatures are verified on every core (delegation.Prepare against
// st.Directory), and a wait function that returns the first refusal, with
// its entry's index, after the last entry. applied, if not nil, sees each
// record as it is applied. A signature by a key the directory does not
// know yet when its entry is prepared (introduced by an entry still in
// flight) is verified by Apply instead: the result is the same, only
// slower.
func Apply(st *delegation.State, applied func(*delegation.Applied)) (ledger.EntryFunc, func() error) {
	return Ordered(func(entry []byte) *delegation.Prepared { return delegation.Prepare(entry, st.Directory) },
		func(_ int64, p *delegation.Prepared, accepted time.Time) error {
			a, err := st.ApplyPrepared(p, accepted)
			if err == nil && applied != nil {
				applied(a)
			}
			return err
		})
}

// Decisions returns an entry callback that checks, on every core, that
// every entry is a decision record in strict encoding, and a wait
// function that returns the refusal of the first that is not: a
// *delegation.RecordError (delegation.RuleMalformed) with its index.
func Decisions() (ledger.EntryFunc, func() error) {
	return Ordered(func(entry []byte) error {
		_, err := schemas.Decode(schemas.KindDecision, entry)
		return err
	}, func(i int64, err error, _ time.Time) error {
		if err != nil {
			return &delegation.RecordError{Index: i, Rule: delegation.RuleMalformed, Err: err}
		}
		return nil
	})
}

// RequireHistory refuses an authority log that keeps no checkpoint
// history (an error wrapping ledger.ErrHistory): the time it accepted
// each record, which the replay judges each record at, cannot be proven.
func RequireHistory(log *ledger.Log) error {
	if !log.HasHistory() {
		return fmt.Errorf("%w: the authority log keeps no checkpoint history, so the time it accepted each record cannot be proven", ledger.ErrHistory)
	}
	return nil
}
