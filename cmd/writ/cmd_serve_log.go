package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/httpbound"
	"github.com/writ-ledger/writ/internal/logmetrics"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/verify/runner"
)

func ledgerServe(c *cli.Context) error {
	if err := wantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	answerBytes, err := maxAnswerBytes(c)
	if err != nil {
		return err
	}
	// Open once now, so that a wrong directory fails here, not per request.
	l, name, err := openEitherLog(c)
	if err != nil {
		return openLogErr(err)
	}
	origin, vkey := l.Origin(), l.VerifierKey()
	l.Close()
	open := func() (*ledger.Log, error) {
		l, _, err := openEitherLog(c)
		return l, err
	}
	limitHeap(answerBytes)
	metrics := logmetrics.New(origin)
	srv := publish.NewServer(open, publish.ServeOptions{Metrics: metrics, MaxAnswerBytes: answerBytes,
		WriteTimeout: httpbound.DefaultWriteTimeout, RetryAfter: httpbound.DefaultRetryAfter,
		Refused: func() { metrics.Refused(logmetrics.ReasonMaxAnswer) }})
	defer srv.Close()
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics.Handler())
	mux.Handle("/", srv)
	return serveHTTP(c, mux, maxLogRequestBody, metrics.Refused, func(addr string) string {
		return fmt.Sprintf("serving %s log %s at http://%s/ (verifier key %s)", name, origin, addr, vkey)
	})
}

// heapHeadroom is what ledger serve's Go heap may hold beyond
// --max-answer-mib before the collector works to keep it there, in bytes:
// the server's own memory (about 10 MiB live), its connections' buffers
// and the garbage not collected yet. It refuses nothing: past it the
// collector runs more often (with at most half the CPU, Go's limiter).
const heapHeadroom = 24 << 20

// limitHeap sets the Go runtime's soft memory limit to answerBytes +
// heapHeadroom, unless GOMEMLIMIT sets one: by default the collector lets
// the heap grow to twice what is live, which would double what the
// answer budget bounds.
func limitHeap(answerBytes int64) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(answerBytes + heapHeadroom)
	}
}

// maxLogRequestBody bounds a request body to ledger serve, in bytes: its
// read API is GET and HEAD only, which carry none.
const maxLogRequestBody = 4 << 10

// serveHTTP serves h on --listen until SIGINT or SIGTERM, then shuts
// down gracefully (5 s). It writes the address it listens on to
// --addr-file, if given, and prints banner(addr) on stdout first. The
// server is bounded by httpLimitFlags and maxBody (bytes of a request
// body); refused, if not nil, counts its refusals.
func serveHTTP(c *cli.Context, h http.Handler, maxBody int64, refused func(httpbound.Reason), banner func(addr string) string) error {
	limits, err := httpLimits(c, maxBody)
	if err != nil {
		return err
	}
	hs, err := httpbound.New(h, limits, httpbound.Options{Refused: refused})
	if err != nil {
		return usageErr("%v", err)
	}
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return inputErr(fmt.Errorf("--listen: %w", err))
	}
	addr := ln.Addr().String()
	if f := c.String("addr-file"); f != "" {
		if err := os.WriteFile(f, []byte(addr+"\n"), 0o644); err != nil {
			ln.Close()
			return inputErr(fmt.Errorf("--addr-file: %w", err))
		}
	}
	// Caught from the moment the banner says it serves.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := emit(c, map[string]any{"listen": addr, "message": banner(addr)}, banner(addr)); err != nil {
		ln.Close()
		return err
	}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(shut)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// publishWhileServing publishes the runner's decision log into to now
// and every period until the returned function is called, which
// publishes once more (the decisions of the last moments) and waits.
// A failure is a warning on stderr: serving goes on.
func publishWhileServing(c *cli.Context, r *runner.Runner, to string, every time.Duration) func() {
	publish := func() {
		if _, err := r.PublishDecisions(to); err != nil {
			diag(c, levelWarning, "publishing the decision log into %s: %v", to, err)
		}
	}
	publish()
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(max(every, time.Second))
		defer t.Stop()
		for {
			select {
			case <-done:
				publish()
				return
			case <-t.C:
				publish()
			}
		}
	}()
	return func() { close(done); <-stopped }
}
