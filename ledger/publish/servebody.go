package publish

import (
	"compress/gzip"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// The bytes a Server holds for its answers are counted against one
// budget (ServeOptions.MaxAnswerBytes): a body is held in chunks, each
// counted from its allocation until it has been written to the
// connection (or the answer is dropped), and a gzip compressor is counted
// while it works. A request that would take the budget past its limit is
// answered 503 at once: memory does not grow with the clients that read
// slowly, and a client is refused quickly rather than queued.

// bodyChunk is the most bytes of an answer held in one allocation, and
// what one write to the connection carries.
const bodyChunk = 64 << 10

// minChunk is the least bytes a body's first chunk is allocated with.
const minChunk = 4 << 10

// gzipState is the memory a gzip compressor uses while it works, in
// bytes (about 910 KiB measured with Go 1.26, rounded up).
const gzipState = 1 << 20

// errBudget: the answers in flight hold MaxAnswerBytes.
var errBudget = errors.New("the answers in flight hold the memory budget")

// byteBudget bounds bytes held by all requests together. It never
// blocks: take fails when the bytes are not there.
type byteBudget struct {
	mu    sync.Mutex
	held  int64
	peak  int64 // the most held at once
	limit int64
}

// take counts n more bytes held, or reports false (counting nothing)
// when that would pass the limit.
func (b *byteBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held+n > b.limit {
		return false
	}
	b.held += n
	b.peak = max(b.peak, b.held)
	return true
}

// give counts n bytes no longer held.
func (b *byteBudget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
}

// answerBody is one answer's body, held in chunks counted against a
// budget. Its Write fails with errBudget when the budget is spent; drop
// gives back whatever it still holds, and must follow.
type answerBody struct {
	budget *byteBudget
	chunks [][]byte
	size   int // bytes of body written into it
}

func newAnswerBody(b *byteBudget) *answerBody { return &answerBody{budget: b} }

// Write appends p, in chunks of at most bodyChunk bytes.
func (a *answerBody) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		last := len(a.chunks) - 1
		if last < 0 || len(a.chunks[last]) == cap(a.chunks[last]) {
			size := bodyChunk
			if last < 0 {
				size = min(bodyChunk, max(minChunk, len(p)))
			}
			if !a.budget.take(int64(size)) {
				return n, errBudget
			}
			a.chunks = append(a.chunks, make([]byte, 0, size))
			last++
		}
		c := a.chunks[last]
		k := min(len(p), cap(c)-len(c))
		a.chunks[last] = append(c, p[:k]...)
		p, n, a.size = p[k:], n+k, a.size+k
	}
	return n, nil
}

// adopt makes p (which the caller no longer uses) the body's next
// chunk, without a copy.
func (a *answerBody) adopt(p []byte) error {
	if !a.budget.take(int64(cap(p))) {
		return errBudget
	}
	a.chunks = append(a.chunks, p)
	a.size += len(p)
	return nil
}

// release gives back chunk i, which is no longer used.
func (a *answerBody) release(i int) {
	if c := a.chunks[i]; c != nil {
		a.budget.give(int64(cap(c)))
		a.chunks[i] = nil
	}
}

// drop gives back every chunk the body still holds.
func (a *answerBody) drop() {
	for i := range a.chunks {
		a.release(i)
	}
}

// gzip returns the body gzipped, and drops a's chunks one by one as the
// compressor takes them: the plain and gzipped bodies are never both held
// whole. The compressor's memory (gzipState) is counted while it works.
// On an error, both bodies are dropped.
func (a *answerBody) gzip() (*answerBody, error) {
	if !a.budget.take(gzipState) {
		a.drop()
		return nil, errBudget
	}
	defer a.budget.give(gzipState)
	out := newAnswerBody(a.budget)
	z := gzip.NewWriter(out)
	for i, c := range a.chunks {
		if _, err := z.Write(c); err != nil {
			a.drop()
			out.drop()
			return nil, err
		}
		a.release(i)
	}
	if err := z.Close(); err != nil {
		out.drop()
		return nil, err
	}
	return out, nil
}

// writeTo writes the body to w, releasing each chunk once the connection
// has taken it. Each write of a chunk must end within the time it takes
// at minRate bytes per second (at least a second), and the whole by
// deadline: a client that reads slower is cut off, and what it held is
// given back. The body is dropped on return, written or not.
func (a *answerBody) writeTo(w http.ResponseWriter, minRate int64, deadline time.Time) error {
	defer a.drop()
	rc := http.NewResponseController(w)
	for i, c := range a.chunks {
		at := time.Now().Add(max(time.Second, time.Duration(int64(len(c))*int64(time.Second)/minRate)))
		if at.After(deadline) {
			at = deadline
		}
		rc.SetWriteDeadline(at) // unsupported by some test writers: they have no deadline
		if _, err := w.Write(c); err != nil {
			return err
		}
		a.release(i)
	}
	// net/http writes what it buffered when the handler returns: give it
	// until the answer's deadline.
	rc.SetWriteDeadline(deadline)
	return nil
}

// budgetRefusal is the text of a 503 past the budget.
func budgetRefusal(limit int64, retry time.Duration) string {
	held := fmt.Sprintf("%d MiB", limit>>20)
	if limit%(1<<20) != 0 {
		held = fmt.Sprintf("%d bytes", limit)
	}
	return fmt.Sprintf("busy (max-answer-mib): the answers in flight hold %s, the limit set by --max-answer-mib; retry after %ds",
		held, retrySeconds(retry))
}

// retrySeconds is d in whole seconds, rounded up, at least 1.
func retrySeconds(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}
