package witness

import (
	"errors"
	"fmt"
	"net/http"
)

// The outcomes of add-checkpoint that are not a cosignature
// (c2sp.org/tlog-witness, "add-checkpoint"). The witness's
// [Witness.AddCheckpoint] returns errors wrapping them, and its handler
// answers each with its HTTP status; the [Client] returns errors wrapping
// the same sentinels for the same statuses, so a log can branch with
// errors.Is whichever side it talks to.
var (
	// ErrBadRequest (400 Bad Request): the request body is malformed, or
	// its old size is larger than the checkpoint's size.
	ErrBadRequest = errors.New("witness: bad request")
	// ErrUnknownLog (404 Not Found): the witness verifies no log of the
	// checkpoint's origin.
	ErrUnknownLog = errors.New("witness: unknown log")
	// ErrForbidden (403 Forbidden): no signature by a key the witness
	// trusts for the origin is on the checkpoint, or such a signature
	// fails to verify.
	ErrForbidden = errors.New("witness: checkpoint signature not verified")
	// ErrConflict (409 Conflict): the old size is not the size of the
	// checkpoint the witness last cosigned for the log. The error is a
	// *ConflictError, which carries that size.
	ErrConflict = errors.New("witness: old size does not match the witness's")
	// ErrInconsistent (422 Unprocessable Entity): the checkpoint is not
	// consistent with what the witness cosigned before, or cannot be: a
	// size-0 checkpoint whose root is not the empty tree's, a proof given
	// with old size 0, a consistency proof that fails (RFC 6962
	// §2.1.2), or the same size with another root hash.
	ErrInconsistent = errors.New("witness: checkpoint not consistent")
	// ErrWitness: the client got no usable answer: a transport error, a
	// status the protocol does not define (5xx, 413, a redirect), or a
	// body that breaks the protocol (a 409 without a size, a 200 that is
	// not signature lines). The witness itself returns it for a failure
	// of its own (its state could not be made durable: 500).
	ErrWitness = errors.New("witness: no usable answer")
	// ErrNotCosigned (404 Not Found on the monitoring checkpoint URL):
	// the witness never cosigned a checkpoint of that log.
	ErrNotCosigned = errors.New("witness: no checkpoint cosigned for this log")
	// ErrClosed: the witness was closed (503 Service Unavailable).
	ErrClosed = errors.New("witness: closed")
)

// Errors of New, for the witness process itself.
var (
	// ErrConfig: the Config cannot make a witness: no or an invalid name,
	// no key, no directory, no log, a log key that is not an Ed25519
	// signed-note verifier key (or is weak), or two keys of one log with
	// the same key id.
	ErrConfig = errors.New("witness: bad configuration")
	// ErrLocked: another process (a second witness) holds the state
	// directory (flock on Config.Dir).
	ErrLocked = errors.New("witness: state directory is in use by another process")
	// ErrCorruptState: a state file under Config.Dir does not hold what
	// the witness writes: a checkpoint of its log, verified under that
	// log's configured keys and cosigned by this witness's key. The error
	// names the file; the witness refuses to start rather than forget
	// what it cosigned.
	ErrCorruptState = errors.New("witness: corrupt state file")
)

// ConflictError is the 409 Conflict answer of add-checkpoint: Size is
// the tree size of the checkpoint the witness last cosigned for the log
// (0 if none), the old size to resubmit with. It wraps ErrConflict.
type ConflictError struct {
	Size int64
}

// Error says the size the witness holds: "witness: old size does not
// match the witness's: the witness holds size N".
func (e *ConflictError) Error() string {
	return fmt.Sprintf("%v: the witness holds size %d", ErrConflict, e.Size)
}

// Unwrap returns ErrConflict.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// ResponseError is a client-side error for an answer other than 200 and
// 409: Status is the HTTP status (0 for a transport error), Line the
// first line of the response body (at most 200 bytes, non-printable bytes
// replaced by '?'), and Kind the sentinel it wraps (ErrBadRequest,
// ErrUnknownLog, ErrForbidden, ErrInconsistent, ErrNotCosigned or
// ErrWitness).
type ResponseError struct {
	URL    string // the request's URL (or the prefix that was refused)
	Status int    // the HTTP status; 0 when none was received
	Line   string // the answer's first line
	Kind   error  // the sentinel
	Err    error  // the transport or protocol failure, if any
}

// Error names the sentinel, the URL, the status, the first line of the
// answer and the underlying failure, those that there are.
func (e *ResponseError) Error() string {
	s := fmt.Sprintf("%v: %s", e.Kind, e.URL)
	if e.Status != 0 {
		s += fmt.Sprintf(": HTTP %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Line != "" {
		s += fmt.Sprintf(": %q", e.Line)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the sentinel (Kind) and the underlying failure.
func (e *ResponseError) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// ruleError is a refusal by the witness: kind is the sentinel, rule the
// one line the response body carries.
type ruleError struct {
	kind error
	rule string
}

func (e *ruleError) Error() string { return e.kind.Error() + ": " + e.rule }
func (e *ruleError) Unwrap() error { return e.kind }

func refuse(kind error, rule string) error { return &ruleError{kind: kind, rule: rule} }

// statusOf returns the HTTP status and the one-line body for an error of
// AddCheckpoint (c2sp.org/tlog-witness, "add-checkpoint").
func statusOf(err error) (int, string) {
	line := "internal error"
	var re *ruleError
	if errors.As(err, &re) {
		line = re.rule
	}
	switch {
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest, line
	case errors.Is(err, ErrUnknownLog):
		return http.StatusNotFound, line
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden, line
	case errors.Is(err, ErrInconsistent):
		return http.StatusUnprocessableEntity, line
	case errors.Is(err, ErrClosed):
		return http.StatusServiceUnavailable, "witness is shutting down"
	}
	return http.StatusInternalServerError, "internal error: the witness could not record the checkpoint"
}
