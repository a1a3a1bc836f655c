package serving

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/httpbound"
	"github.com/writ-ledger/writ/internal/logmetrics"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/publish"
)

// HTTP is one of writ's HTTP servers (witness serve, ledger serve) as the
// command line gives it: a handler, its limits and where it listens.
type HTTP struct {
	Handler  http.Handler
	Limits   HTTPLimits
	MaxBody  int64                  // bytes of a request body at most
	Refused  func(httpbound.Reason) // counts the refusals, when not nil
	Listen   string                 // the TCP address (host:port; port 0 picks one), --listen
	AddrFile string                 // also write the address listened on here, --addr-file (when not "")
	// TLS, when set, serves HTTPS with it (httpbound.Options.TLS).
	TLS *tls.Config
	// Ready is called with the address listened on before the first
	// request is served (the banner); an error it returns stops Run
	// before serving, with the listener closed.
	Ready func(addr string) error
}

// Run checks the limits (HTTPLimits.Bound), listens (Listen), calls
// Ready, then serves until ctx is done or the process gets SIGINT or
// SIGTERM (caught from the moment Ready is called), and shuts down
// gracefully (Serve). Its errors: bad usage (*exitcode.Error, exit 2)
// for limits out of range, bad input for --listen or --addr-file,
// Ready's error, or the error serving failed with.
func (h HTTP) Run(ctx context.Context) error {
	limits, err := h.Limits.Bound(h.MaxBody)
	if err != nil {
		return err
	}
	hs, err := httpbound.New(h.Handler, limits, httpbound.Options{Refused: h.Refused, TLS: h.TLS})
	if err != nil {
		return exitcode.Usagef("%v", err)
	}
	ln, err := Listen(h.Listen, h.AddrFile)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := h.Ready(ln.Addr().String()); err != nil {
		ln.Close()
		return err
	}
	return Serve(ctx, hs, ln)
}

// LogServer is ledger serve's handler: a log's tlog-tiles read API
// (publish.Server) under an answer budget, and its Prometheus metrics at
// /metrics.
type LogServer struct {
	mux     *http.ServeMux
	srv     *publish.Server
	metrics *logmetrics.Metrics
}

// NewLogServer serves the log open opens (once per request, as
// publish.NewServer does), whose origin is origin, holding at most
// answerBytes bytes of answers in memory at once (all clients together);
// past them a request is refused 503 with Retry-After
// (httpbound.DefaultRetryAfter) and counted as logmetrics.ReasonMaxAnswer.
// Close releases it.
func NewLogServer(origin string, open func() (*ledger.Log, error), answerBytes int64) *LogServer {
	metrics := logmetrics.New(origin)
	srv := publish.NewServer(open, publish.ServeOptions{Metrics: metrics, MaxAnswerBytes: answerBytes,
		WriteTimeout: httpbound.DefaultWriteTimeout, RetryAfter: httpbound.DefaultRetryAfter,
		Refused: func() { metrics.Refused(logmetrics.ReasonMaxAnswer) }})
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics.Handler())
	mux.Handle("/", srv)
	return &LogServer{mux: mux, srv: srv, metrics: metrics}
}

// ServeHTTP answers /metrics and the read API.
func (s *LogServer) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Refused counts a request the server's bounds refused (HTTP.Refused).
func (s *LogServer) Refused(reason httpbound.Reason) { s.metrics.Refused(reason) }

// Close releases the read API server (publish.Server.Close).
func (s *LogServer) Close() error { return s.srv.Close() }
