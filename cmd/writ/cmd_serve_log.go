package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/httpbound"
	"github.com/writ-ledger/writ/internal/serving"
	"github.com/writ-ledger/writ/ledger"
)

func ledgerServe(c *cli.Context) error {
	if err := wantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	answerBytes, err := cliflags.AnswerBytes(c)
	if err != nil {
		return err
	} else if c.Bool("write") {
		return ledgerServeWrite(c, answerBytes)
	} else if f := cliflags.Given(c, "policy", "tls-cert", "tls-key", "client-ca", "bucket", "s3-endpoint"); f != nil {
		return exitcode.Usagef("--%s is for the writer service: add --write", f[0])
	}
	// Open once now, so that a wrong directory fails here, not per request.
	l, name, err := openEitherLog(c)
	if err != nil {
		return err
	}
	origin, vkey := l.Origin(), l.VerifierKey()
	l.Close()
	serving.LimitHeap(answerBytes)
	srv := serving.NewLogServer(origin, func() (*ledger.Log, error) {
		l, _, err := openEitherLog(c)
		return l, err
	}, answerBytes)
	defer srv.Close()
	return serveHTTP(c, srv, maxLogRequestBody, srv.Refused, func(addr string) string {
		return fmt.Sprintf("serving %s log %s at http://%s/ (verifier key %s)", name, origin, addr, vkey)
	})
}

// maxLogRequestBody bounds a request body to ledger serve, in bytes: its
// read API is GET and HEAD only, which carry none.
const maxLogRequestBody = 4 << 10

// serveHTTP serves h on --listen until SIGINT or SIGTERM, then shuts
// down gracefully (serving.HTTP.Run). It writes the address it listens on
// to --addr-file, if given, and prints banner(addr) on stdout first. The
// server is bounded by httpLimitFlags and maxBody (bytes of a request
// body); refused, if not nil, counts its refusals.
func serveHTTP(c *cli.Context, h http.Handler, maxBody int64, refused func(httpbound.Reason), banner func(addr string) string) error {
	s := listenServer(c, banner)
	s.Handler, s.MaxBody, s.Refused = h, maxBody, refused
	return s.Run(context.Background())
}

// listenServer is the server --listen, --addr-file and httpLimitFlags give,
// printing banner(addr) first.
func listenServer(c *cli.Context, banner func(addr string) string) serving.HTTP {
	return serving.HTTP{Listen: c.String("listen"), AddrFile: c.String("addr-file"),
		Limits: serving.HTTPLimits{MaxInFlight: c.Int("max-in-flight"), MaxPerClient: c.Int("max-per-client"),
			MaxConns: c.Int("max-conns"), ReadTimeout: c.Duration("read-timeout")},
		Ready: func(addr string) error { return emitSorted(c, listenResult{addr, banner(addr)}, banner(addr)) },
	}
}
