// Package serving runs writ's HTTP servers (witness serve, ledger serve)
// and bounds its admission server: the limits given on the command line
// checked and turned into httpbound.Limits or admission.Server fields,
// the listener opened (its address written to a file for scripts), and
// the server run until its context is done, then shut down gracefully.
//
// The limits' errors are bad usage (*exitcode.Error, exit 2) naming the
// command line's flags (--max-in-flight, --max-per-client, --max-conns,
// --read-timeout, --max-answer-mib).
package serving

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/httpbound"
	"github.com/writ-ledger/writ/ledger/publish"
)

// HTTPLimits are the bounds of an HTTP server, as given: what one client,
// and all of them, can make it hold.
type HTTPLimits struct {
	MaxInFlight  int           // requests answered at once (--max-in-flight)
	MaxPerClient int           // of them from one IP address (--max-per-client)
	MaxConns     int           // connections open (--max-conns)
	ReadTimeout  time.Duration // for a request's body (--read-timeout)
}

// Bound checks the limits (every count at least 1, a positive timeout)
// and returns them as httpbound's, a request's body bounded to maxBody
// bytes.
func (l HTTPLimits) Bound(maxBody int64) (httpbound.Limits, error) {
	for _, f := range []struct {
		name string
		v    int
	}{{"max-in-flight", l.MaxInFlight}, {"max-per-client", l.MaxPerClient}, {"max-conns", l.MaxConns}} {
		if f.v < 1 {
			return httpbound.Limits{}, exitcode.Usagef("--%s %d: at least 1", f.name, f.v)
		}
	}
	if l.ReadTimeout <= 0 {
		return httpbound.Limits{}, exitcode.Usagef("--read-timeout %s: must be positive", l.ReadTimeout)
	}
	return httpbound.Limits{MaxInFlight: l.MaxInFlight, MaxPerClient: l.MaxPerClient,
		MaxConns: l.MaxConns, ReadTimeout: l.ReadTimeout, MaxBodyBytes: maxBody}, nil
}

// AnswerBytes checks ledger serve's answer budget, mib mebibytes
// (--max-answer-mib: at least publish.MinMaxAnswerBytes, at most 1 TiB),
// and returns it in bytes.
func AnswerBytes(mib int) (int64, error) {
	if mib < publish.MinMaxAnswerBytes>>20 || mib > 1<<20 {
		return 0, exitcode.Usagef("--max-answer-mib %d: at least %d (the largest answer, a full entry bundle, gzipped), at most %d", mib, publish.MinMaxAnswerBytes>>20, 1<<20)
	}
	return int64(mib) << 20, nil
}

// AdmissionLimits are the bounds of the admission server, as given.
type AdmissionLimits struct {
	MaxInFlight  int           // requests answered at once (--max-in-flight)
	MaxPerClient int           // of them from one client process (--max-per-client)
	ReadTimeout  time.Duration // for a whole request (--read-timeout)
}

// Apply checks the limits (counts at least 1, per client at most in
// flight, a positive timeout) and sets them on s.
func (l AdmissionLimits) Apply(s *admission.Server) error {
	for _, f := range []struct {
		name string
		v    int
	}{{"max-in-flight", l.MaxInFlight}, {"max-per-client", l.MaxPerClient}} {
		if f.v < 1 {
			return exitcode.Usagef("--%s %d: at least 1", f.name, f.v)
		}
	}
	if l.MaxPerClient > l.MaxInFlight {
		return exitcode.Usagef("--max-per-client %d is above --max-in-flight %d", l.MaxPerClient, l.MaxInFlight)
	}
	if l.ReadTimeout <= 0 {
		return exitcode.Usagef("--read-timeout %s: must be positive", l.ReadTimeout)
	}
	s.MaxConnections, s.MaxPerClient, s.RequestTimeout = l.MaxInFlight, l.MaxPerClient, l.ReadTimeout
	return nil
}

// HeapHeadroom is what ledger serve's Go heap may hold beyond its answer
// budget before the collector works to keep it there, in bytes: the
// server's own memory (about 10 MiB live), its connections' buffers and
// the garbage not collected yet. It refuses nothing: past it the
// collector runs more often (with at most half the CPU, Go's limiter).
const HeapHeadroom = 24 << 20

// LimitHeap sets the Go runtime's soft memory limit to answerBytes +
// HeapHeadroom, unless GOMEMLIMIT sets one: by default the collector
// lets the heap grow to twice what is live, which would double what the
// answer budget bounds.
func LimitHeap(answerBytes int64) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(answerBytes + HeapHeadroom)
	}
}

// Listen listens on the TCP address addr (host:port; port 0 picks one)
// and, when addrFile is not "", writes the address it listens on there
// (with a newline, mode 0644). Errors are bad input naming --listen or
// --addr-file.
func Listen(addr, addrFile string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, exitcode.Input(fmt.Errorf("--listen: %w", err))
	}
	if addrFile != "" {
		if err := os.WriteFile(addrFile, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			ln.Close()
			return nil, exitcode.Input(fmt.Errorf("--addr-file: %w", err))
		}
	}
	return ln, nil
}

// ShutdownGrace is how long a server stopped by its context has to
// finish the requests in flight.
const ShutdownGrace = 5 * time.Second

// Server is an HTTP server Serve runs: an *http.Server or an
// *httpbound.Server.
type Server interface {
	Serve(ln net.Listener) error
	Shutdown(ctx context.Context) error
}

// Serve serves on ln with hs until ctx is done, then shuts hs down
// gracefully (ShutdownGrace) and returns nil; it returns hs.Serve's
// error when serving fails otherwise (http.ErrServerClosed aside).
func Serve(ctx context.Context, hs Server, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
		defer cancel()
		hs.Shutdown(shut)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
