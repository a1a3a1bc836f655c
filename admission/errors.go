package admission

import (
	"errors"
	"fmt"
)

// Errors callers branch on (with errors.Is). Each is wrapped with the
// evidence: the path, the user ids, the digests, the server's message.
var (
	// ErrMalformedRequest: what a client sent is not one well-formed
	// request (see DecodeRequest). The server answers {"error", "run":
	// false} and records nothing.
	ErrMalformedRequest = errors.New("malformed admission request")

	// ErrSocketInUse: Listen found a server already answering on the path.
	ErrSocketInUse = errors.New("another server is listening there")

	// ErrNotSocket: Listen found a file that is not a socket at the path,
	// and does not replace it.
	ErrNotSocket = errors.New("exists and is not a socket")

	// errInternal: a panic while serving one request. Serve answers that
	// request {"error", "run": false} and stops.
	errInternal = errors.New("internal error")

	// ErrConnect: the client could not connect to the server or send its
	// request. The server decided nothing.
	ErrConnect = errors.New("could not reach the admission server")

	// ErrUntrustedServer: the process that serves the socket does not run
	// as Client.UID (a *PeerUIDError), or its user id could not be read
	// (SO_PEERCRED). Nothing was sent: anyone who could bind the path could
	// otherwise say yes to anything.
	ErrUntrustedServer = errors.New("the admission server is not the expected user")

	// ErrNoVerdict: the request was sent but the answer could not be read.
	// The server may have decided, and recorded, a verdict: do not run the
	// dispatch, and expect a retry to be refused as a replay if it was
	// admitted.
	ErrNoVerdict = errors.New("no verdict read")

	// ErrMalformedResponse: the server's answer is not one well-formed
	// Response: not JSON, over MaxResponseSize bytes, a field this package
	// does not know, or run true beside a refusal or an error.
	ErrMalformedResponse = errors.New("malformed admission response")

	// ErrRejected: the server rejected the request as malformed (its
	// message follows) and recorded nothing.
	ErrRejected = errors.New("the server rejected the request")

	// ErrBusy: the server is at its limit of requests in flight (in total,
	// or for this client process) and answered busy without reading the
	// request; it decided and recorded nothing. Retry after the seconds
	// of a *BusyError.
	ErrBusy = errors.New("the admission server is busy")

	// ErrWrongDispatch: the server's verdict is bound to another dispatch
	// than the one sent (a *WrongDispatchError); it is not returned.
	ErrWrongDispatch = errors.New("the verdict is for another dispatch")
)

// PeerUIDError is ErrUntrustedServer when the server's user id is known
// and is not the expected one.
type PeerUIDError struct {
	Socket string // the socket's path
	UID    int    // the server process's user id, from the kernel (SO_PEERCRED)
	Want   int    // Client.UID
}

func (e *PeerUIDError) Error() string {
	return fmt.Sprintf("%s is served by uid %d, not by this user (uid %d): refusing its verdict", e.Socket, e.UID, e.Want)
}

// Unwrap returns ErrUntrustedServer.
func (e *PeerUIDError) Unwrap() error { return ErrUntrustedServer }

// WrongDispatchError is ErrWrongDispatch: the verdict's
// instruction_digest is not the digest of the dispatch bytes sent.
type WrongDispatchError struct {
	Got  string // the verdict's instruction_digest, as the server sent it
	Sent string // sha256:<64 hex> of Request.Dispatch
}

func (e *WrongDispatchError) Error() string {
	return fmt.Sprintf("the server's verdict is for dispatch %s, this one is %s: refusing it", e.Got, e.Sent)
}

// Unwrap returns ErrWrongDispatch.
func (e *WrongDispatchError) Unwrap() error { return ErrWrongDispatch }

// BusyError is ErrBusy with the server's answer.
type BusyError struct {
	Message    string // the server's error: the limit reached and the flag that sets it
	RetryAfter int64  // the whole seconds the server asks the client to wait
}

func (e *BusyError) Error() string {
	return "the admission server is busy: " + e.Message
}

// Unwrap returns ErrBusy.
func (e *BusyError) Unwrap() error { return ErrBusy }

// messageError is an error whose text is msg and that errors.Is matches
// to each of errs: for messages that are part of the wire format or of
// writ's output and read as they always have, without the sentinel's
// text in them.
type messageError struct {
	msg  string
	errs []error
}

func (e *messageError) Error() string   { return e.msg }
func (e *messageError) Unwrap() []error { return e.errs }

// wrap returns an error reading as fmt.Errorf(format, args...) does that
// matches sentinel, and what a %w among args matches.
func wrap(sentinel error, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &messageError{msg: err.Error(), errs: []error{sentinel, err}}
}
