package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/httpbound"
	"github.com/writ-ledger/writ/internal/logmetrics"
	"github.com/writ-ledger/writ/internal/serving"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/publish"
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
	serving.LimitHeap(answerBytes)
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

// maxLogRequestBody bounds a request body to ledger serve, in bytes: its
// read API is GET and HEAD only, which carry none.
const maxLogRequestBody = 4 << 10

// serveHTTP serves h on --listen until SIGINT or SIGTERM, then shuts
// down gracefully (serving.Serve). It writes the address it listens on to
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
	ln, err := serving.Listen(c.String("listen"), c.String("addr-file"))
	if err != nil {
		return asExit(err)
	}
	addr := ln.Addr().String()
	// Caught from the moment the banner says it serves.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := emitSorted(c, listenResult{addr, banner(addr)}, banner(addr)); err != nil {
		ln.Close()
		return err
	}
	return serving.Serve(ctx, hs, ln)
}
