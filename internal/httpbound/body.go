package httpbound

import (
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
// never a place in flight, until ReadTimeout cuts it. r.ContentLength is
// then the length read (a chunked body's too). It returns what it
// holds (to give back once the request is answered) and, when the
// request may not go on, the refusal to answer: ReasonBodySize past
// MaxBodyBytes, ReasonBodies or ReasonBodiesPerClient past the budget,
// ReasonBodyRead for a body that did not arrive whole (the client went
// away, a chunked body cut short, the read timeout).
func (b *bounded) readBody(w http.ResponseWriter, r *http.Request, ip string) (held int, refuse Reason) {
	l := b.s.limits
	body := http.MaxBytesReader(w, r.Body, l.MaxBodyBytes)
	var chunks chunkReader
	for read := int64(0); ; {
		want := min(max(minBodyChunk, read), maxBodyChunk, l.MaxBodyBytes-read)
		if r.ContentLength >= 0 {
			want = min(want, r.ContentLength-read)
		}
		if want == 0 { // the declared length read, or the limit: one more byte says which
			if reason := endOfBody(body, r.ContentLength >= 0); reason != "" {
				return held, reason
			}
			r.Body, r.ContentLength = io.NopCloser(&chunks), read
			return held, ""
		}
		switch b.s.bodies.acquireN(ip, int(want)) {
		case errTotal:
			return held, ReasonBodies
		case errClient:
			return held, ReasonBodiesPerClient
		}
		held += int(want)
		c := make([]byte, want)
		n, err := fill(body, c)
		read += int64(n)
		chunks = append(chunks, c[:n])
		switch {
		case err == io.EOF && (r.ContentLength < 0 || read == r.ContentLength):
			r.Body, r.ContentLength = io.NopCloser(&chunks), read
			return held, ""
		case err == io.EOF: // fewer bytes than declared
			return held, ReasonBodyRead
		case err != nil:
			return held, readFailure(err)
		}
	}
}

// fill reads into c until it is full or the body ends or fails: io.EOF
// for the body's normal end (a chunked body's last chunk read), any other
// error as the body reader gave it (io.ErrUnexpectedEOF for a body cut
// short).
func fill(body io.Reader, c []byte) (int, error) {
	n := 0
	for n < len(c) {
		k, err := body.Read(c[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// endOfBody reads past the declared length (known) or the body limit:
// nothing more must come. It returns "" at the body's end, else the
// refusal.
func endOfBody(body io.Reader, known bool) Reason {
	var one [1]byte
	n, err := body.Read(one[:])
	switch {
	case n == 0 && err == io.EOF:
		return ""
	case known && n == 0 && err == nil:
		return "" // net/http's body says EOF on the next read
	case n > 0 || isTooLarge(err):
		return ReasonBodySize
	default:
		return readFailure(err)
	}
}

// readFailure is the refusal for a body read that failed with err.
func readFailure(err error) Reason {
	if isTooLarge(err) {
		return ReasonBodySize
	}
	return ReasonBodyRead
}

func isTooLarge(err error) bool {
	var tooLarge *http.MaxBytesError
	return errors.As(err, &tooLarge)
}

// chunkReader reads a body's chunks in order, letting go of each once
// read: a handler that copies the body frees it for the collector.
type chunkReader [][]byte

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(*c) > 0 && len((*c)[0]) == 0 {
		(*c)[0] = nil
		*c = (*c)[1:]
	}
	if len(*c) == 0 {
		return 0, io.EOF
	}
	n := copy(p, (*c)[0])
	(*c)[0] = (*c)[0][n:]
	return n, nil
}
