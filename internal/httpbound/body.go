package httpbound

import (
	"bytes"
	"errors"
	"io"
	"net/http"
)

// A request body is read and held in chunks: the first of
// minBodyChunk bytes, each next one as large as what was read before it,
// up to maxBodyChunk. A body holds one chunk ahead of what it sent: a
// client that sends nothing holds 1 KiB, one that sent n bytes at most
// 2n + 1 KiB.
const (
	minBodyChunk = 1 << 10
	maxBodyChunk = 32 << 10
)

// readBody reads r's whole body into memory before the request takes a
// place in flight, and replaces r.Body with what it read. Its bytes are
// held in the server's body budget (MaxInFlight × MaxBodyBytes in all,
// MaxPerClient × MaxBodyBytes for one client) as they arrive, a chunk
// ahead: a client that sends its body slowly holds the bytes it sent,
// never a place in flight, until ReadTimeout cuts it. It returns what it
// holds (to give back once the request is answered) and whether the
// request may go on; when not, the refusal to answer (ReasonBodySize past
// MaxBodyBytes, ReasonBodies or ReasonBodiesPerClient past the budget),
// or "" when the client went away or was cut off (nothing to answer).
func (b *bounded) readBody(w http.ResponseWriter, r *http.Request, ip string) (held int, refuse Reason, ok bool) {
	l := b.s.limits
	body := http.MaxBytesReader(w, r.Body, l.MaxBodyBytes)
	var chunks []io.Reader
	for read := int64(0); ; {
		want := min(max(minBodyChunk, read), maxBodyChunk, l.MaxBodyBytes+1-read) // one byte past the limit shows a body over it
		if r.ContentLength >= 0 {
			if read == r.ContentLength {
				break
			}
			want = min(want, r.ContentLength-read)
		}
		switch b.s.bodies.acquireN(ip, int(want)) {
		case errTotal:
			return held, ReasonBodies, false
		case errClient:
			return held, ReasonBodiesPerClient, false
		}
		held += int(want)
		c := make([]byte, want)
		n, err := io.ReadFull(body, c)
		read += int64(n)
		chunks = append(chunks, bytes.NewReader(c[:n]))
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			return held, ReasonBodySize, false
		case (err == io.EOF || err == io.ErrUnexpectedEOF) && r.ContentLength < 0:
			r.Body = io.NopCloser(io.MultiReader(chunks...))
			return held, "", true
		case err != nil:
			return held, "", false
		}
	}
	r.Body = io.NopCloser(io.MultiReader(chunks...))
	return held, "", true
}
