package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

// Defaults for a Server's zero fields.
const (
	// DefaultMaxConnections bounds the requests served at once (each
	// holds at most about MaxRequestSize twice while it is read, and a
	// verdict's hashing streams); a client past it is answered busy at
	// once.
	DefaultMaxConnections = 64
	// DefaultMaxPerClient bounds the requests of one client process at
	// once.
	DefaultMaxPerClient = 32
	// DefaultRequestTimeout bounds how long a client may take to send its
	// request. Answering has no deadline: a verdict may hash large files.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultRetryAfter is the retry_after of a busy answer.
	DefaultRetryAfter = time.Second
)

// Admitter decides one dispatch and records the decision, as
// *runner.Runner does: the verdict, its index in the decision log, and an
// error wrapping runner.ErrNotRecorded when the decision could not be
// made durable (then the verdict still says what it was). It is called
// from many goroutines at once.
type Admitter interface {
	Admit(verify.Dispatch) (*verify.Verdict, int64, error)
}

// Server answers admission requests, one per connection: it reads one
// Request (DecodeRequest), asks Runner, writes one Response and closes
// the connection. A malformed request is answered {"error", "run": false}
// and not passed to Runner. A connection past MaxConnections or
// MaxPerClient is answered busy at once, without its request being read:
// {"error": "busy (max-in-flight): ...", "retry_after": SECONDS, "run":
// false}, which a Client returns as ErrBusy.
type Server struct {
	Runner Admitter
	// MaxConnections bounds the requests served at once
	// (DefaultMaxConnections when 0).
	MaxConnections int
	// MaxPerClient bounds the requests served at once for one client
	// process, told by its pid as the kernel gives it (SO_PEERCRED)
	// (DefaultMaxPerClient, at most MaxConnections, when 0). A client
	// that forks gets a new pid: this bounds a runaway client, not an
	// adversary, who must run as the server's user to connect at all.
	MaxPerClient int
	// RequestTimeout bounds the time to read a request
	// (DefaultRequestTimeout when 0).
	RequestTimeout time.Duration
	// RetryAfter is the wait a busy answer asks for, rounded up to whole
	// seconds (DefaultRetryAfter when 0).
	RetryAfter time.Duration
	// Warnf, when set, is told of trouble that does not stop the server
	// (a failed accept, retried).
	Warnf func(format string, args ...any)
}

// Serve accepts connections on ln and answers each in its own goroutine
// until ctx is done, then closes ln and returns nil once the requests in
// flight are answered (and their decisions recorded). It also returns,
// after the same wait, when ln is closed (nil) or when the server can go
// on no longer: an error wrapping runner.ErrNotRecorded when Runner could
// not make a decision durable, or an internal error for a panic while serving.
// Serve closes ln before it returns. A failed accept (out of descriptors,
// an aborted connection) is retried after a pause of 5 ms, doubling up to
// a second.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer ln.Close()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	slots := newSlots(orDefault(s.MaxConnections, DefaultMaxConnections), s.MaxPerClient)
	var wg sync.WaitGroup
	var failed error
	var once sync.Once
	for backoff := 5 * time.Millisecond; ; {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
				break // ctx is done, or a fatal error closed the listener
			}
			if s.Warnf != nil {
				s.Warnf("accepting a connection: %v; retrying in %s", err, backoff)
			}
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		pid := peerPID(conn)
		if busy := slots.acquire(pid); busy != "" {
			s.answerBusy(conn, busy)
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { slots.release(pid); wg.Done() }()
			if err := s.serveOne(conn); err != nil {
				once.Do(func() { failed = err; cancel() })
			}
		}()
	}
	wg.Wait()
	return failed
}

// orDefault is v, or def when v is not positive.
func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// serveOne answers the one request on conn. It returns an error only when
// the server cannot go on: the runner can no longer record decisions, or
// a panic.
func (s *Server) serveOne(conn net.Conn) (fatal error) {
	defer conn.Close()
	enc := json.NewEncoder(conn)
	defer func() {
		if p := recover(); p != nil {
			enc.Encode(rejection{Error: fmt.Sprintf("internal error: %v", p)})
			fatal = fmt.Errorf("%w serving a request: %v", errInternal, p)
		}
	}()
	conn.SetDeadline(time.Now().Add(orDefault(s.RequestTimeout, DefaultRequestTimeout)))
	req, err := DecodeRequest(conn)
	if err != nil {
		enc.Encode(rejection{Error: err.Error()})
		return nil
	}
	conn.SetDeadline(time.Time{}) // the verdict may hash large files
	start := time.Now()           // total_us: from the request read to the durable verdict
	v, index, err := s.Runner.Admit(req.ToDispatch())
	res := NewResponse(v, index)
	res.Run = err == nil && v.Admitted()
	res.HashUS, res.RecordUS = v.HashTime.Microseconds(), v.RecordTime.Microseconds()
	res.TotalUS = time.Since(start).Microseconds()
	if err != nil {
		res.Error, res.DecisionIndex = err.Error(), nil
	}
	enc.Encode(res)
	if errors.Is(err, runner.ErrNotRecorded) {
		return err
	}
	return nil
}

// Listen listens on a new UNIX socket at path, created mode 0600 (only
// this user may connect). A stale socket left by a server that is gone is
// replaced; a socket a server answers on is ErrSocketInUse, any other file
// ErrNotSocket. The listener does not remove path when closed: the caller
// removes it when done. Listen sets the process's umask while it creates
// the socket, so it must not run beside other goroutines creating files.
func Listen(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s: %w", path, ErrNotSocket)
		}
		if conn, err := net.Dial("unix", path); err == nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", path, ErrSocketInUse)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	return ln, nil
}
