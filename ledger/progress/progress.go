// Package progress is how writ's long operations (export, import,
// publish, sync, audit) tell a caller how much is done.
package progress

import (
	"io"
)

// Func is told how much of a long operation is done: done of total,
// in the unit the operation documents (entries, tiles or bytes), each
// call with done at least the last call's and at most total, and a last
// call with done == total when the operation succeeds. It is called from
// the goroutine doing the work and must return quickly; it cannot stop
// the work.
type Func func(done, total int64)

// progressEvery is how many units pass between Progress calls of an
// operation counted in entries or tiles; byte counts report on every
// read (a read is at least a buffer).
const progressEvery = 1024

// Report calls p (if set) with done of total (done capped at total).
func (p Func) Report(done, total int64) {
	if p != nil {
		p(min(done, total), total)
	}
}

// Tick reports, as Report, every progressEvery (1024) units and at the
// end: for operations counted in entries or tiles.
func (p Func) Tick(done, total int64) {
	if p != nil && (done%progressEvery == 0 || done >= total) {
		p.Report(done, total)
	}
}

// Reader counts the bytes read through it towards Progress:
// Offset+bytes read of Total.
type Reader struct {
	R        io.Reader
	Progress Func
	Offset   int64 // bytes counted before this reader (an earlier pass)
	Total    int64 // bytes of the whole operation
	n        int64
}

// Read reads from R and reports the bytes read so far.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.R.Read(p)
	if n > 0 {
		r.n += int64(n)
		r.Progress.Report(r.Offset+r.n, r.Total)
	}
	return n, err
}
