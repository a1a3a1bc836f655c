package witness

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Content types of the answers.
const (
	// SizeContentType is the Content-Type of a 409 answer, whose body is
	// the size the witness holds and a newline (c2sp.org/tlog-witness).
	SizeContentType = "text/x.tlog.size"
	// NoteContentType is the Content-Type of a 200 answer to
	// add-checkpoint (signature lines) and of a served checkpoint: the
	// specification names none, and both are UTF-8 text (the em dash of a
	// signature line).
	NoteContentType = "text/plain; charset=utf-8"
)

// Handler returns the witness's HTTP interface (c2sp.org/tlog-witness),
// with the submission and monitoring prefixes both at the root:
//
//   - POST /add-checkpoint: AddCheckpoint. 200 with the cosignature line
//     (NoteContentType); 400, 403, 404, 422 as AddCheckpoint says, each
//     with one line of plain text naming the rule that failed; 409 with
//     the held size and "\n" (SizeContentType); 413 for a body over
//     MaxRequestSize; 500 when the state could not be made durable; 503
//     after Close. Another method: 405 with "Allow: POST".
//   - GET (or HEAD) /<OriginHash(origin)>/checkpoint ("Monitor Retrieval
//     Mechanism"): the checkpoint last cosigned for that log, with the
//     log signatures the witness verified and its cosignature
//     (NoteContentType); 404 when the origin is not configured or nothing
//     was cosigned for it. Another method: 405 with "Allow: GET, HEAD".
//   - Any other path: 404.
//
// Where torchwood's litewitness answers 403 for a checkpoint of an
// unknown origin, this handler follows the specification: 404.
func (w *Witness) Handler() http.Handler { return handler{w} }

type handler struct{ w *Witness }

func (h handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("X-Content-Type-Options", "nosniff")
	if r.URL.Path == "/add-checkpoint" {
		h.addCheckpoint(rw, r)
		return
	}
	if hash, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/checkpoint"); ok && isOriginHash(hash) {
		h.checkpoint(rw, r, hash)
		return
	}
	plain(rw, http.StatusNotFound, "not found: the witness serves POST /add-checkpoint and GET /<sha256 hex of origin>/checkpoint")
}

func (h handler) addCheckpoint(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		plain(rw, http.StatusMethodNotAllowed, "add-checkpoint must be a POST")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, MaxRequestSize))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		plain(rw, http.StatusRequestEntityTooLarge, "request body larger than "+strconv.Itoa(MaxRequestSize)+" bytes")
		return
	} else if err != nil {
		plain(rw, http.StatusBadRequest, "the request body could not be read")
		return
	}
	sig, err := h.w.AddCheckpoint(body)
	var conflict *ConflictError
	switch {
	case errors.As(err, &conflict):
		rw.Header().Set("Content-Type", SizeContentType)
		rw.WriteHeader(http.StatusConflict)
		io.WriteString(rw, strconv.FormatInt(conflict.Size, 10)+"\n")
	case err != nil:
		status, line := statusOf(err)
		plain(rw, status, line)
	default:
		rw.Header().Set("Content-Type", NoteContentType)
		rw.Header().Set("Cache-Control", "no-store")
		rw.Write(sig)
	}
}

func (h handler) checkpoint(rw http.ResponseWriter, r *http.Request, hash string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rw.Header().Set("Allow", "GET, HEAD")
		plain(rw, http.StatusMethodNotAllowed, "the checkpoint URL must be a GET")
		return
	}
	l := h.w.hashes[hash]
	if l == nil {
		plain(rw, http.StatusNotFound, "no such log: the witness has no log of this origin hash")
		return
	}
	signed, _, err := h.w.Checkpoint(l.origin)
	if err != nil {
		plain(rw, http.StatusNotFound, "not cosigned: the witness never cosigned a checkpoint of this log")
		return
	}
	rw.Header().Set("Content-Type", NoteContentType)
	rw.Header().Set("Content-Length", strconv.Itoa(len(signed)))
	rw.Write(signed)
}

// plain writes status with one line of text.
func plain(rw http.ResponseWriter, status int, line string) {
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rw.WriteHeader(status)
	io.WriteString(rw, line+"\n")
}
