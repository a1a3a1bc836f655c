package serving

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"sync/atomic"
	"syscall"

	"github.com/writ-ledger/writ/engine"
	"github.com/writ-ledger/writ/internal/endpoint"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/logservice"
	"github.com/writ-ledger/writ/verify"
)

// TLSFiles are a server's TLS files as given: its certificate chain and
// key (PEM; --tls-cert, --tls-key), read again on SIGHUP, and the CA
// certificates a client's certificate must chain to (--client-ca; ""
// takes any client).
type TLSFiles struct {
	Cert, Key, ClientCA string
}

// Writer is `writ ledger serve --write`: the writer service of an
// authority log (logservice.Service) behind httpbound's limits, over
// HTTPS when TLS names a certificate, else over plain HTTP on a loopback
// address only (behind a reverse proxy on the same host that terminates
// TLS, as README's nginx example does).
type Writer struct {
	HTTP    HTTP // the listener, its limits and the banner (Handler, MaxBody and Refused are set by Run)
	TLS     TLSFiles
	Options logservice.Options
	// Loaded is called once the state is loaded, before the first
	// submission is taken (to print the replay's note); nil: nothing.
	Loaded func(*verify.Authority)
	// Warn reports what the service meets while it runs (a certificate
	// that failed to reload); nil: nothing.
	Warn func(format string, args ...any)
	// Engine, when set, is the distributed engine the log's batches go
	// to (engine.OpenWriter): each batch is judged under the engine's
	// lock after the entries other writers put there, and answered once
	// the engine has it.
	Engine *engine.Config
}

// WriterBase is what the writer service's Go heap holds besides request
// bodies, in bytes: the store's caches and memtable, the state, the
// server (about 40 MiB). Run sets the soft memory limit (LimitHeap) to
// it plus twice the bodies --max-in-flight allows (each held as
// received and as read), so the collector keeps the heap near what is
// live rather than letting it grow to twice that.
const WriterBase = 40 << 20

// Run serves l (an authority log open for writing with its checkpoint
// key) until ctx is done or the process gets SIGINT or SIGTERM, then stops
// taking connections, lets the submissions in flight finish (each
// answered once durable, within ShutdownGrace) and returns nil; the
// caller then closes l. The state is loaded after the listener is open
// (logservice.Service.Load; /readyz says when). Errors: bad usage for an
// option out of range, plain HTTP on an address that is not loopback, or
// a TLS file that does not load; the listener's; a log that does not
// verify, as a *verify.LoadError (the service stops); with an Engine,
// engine.OpenWriter's; without, bad usage for a log on one.
func (w Writer) Run(ctx context.Context, l *ledger.Log) error {
	svc, err := logservice.New(l, w.Options)
	if err != nil {
		return exitcode.Usagef("%v", err)
	}
	defer svc.Close()
	var ew *engine.Writer
	if on := l.OnEngine(); w.Engine == nil && on != "" {
		return exitcode.Usagef("the authority log is on a distributed engine (%s): serve it with --dsn and --bucket, or take it back first (writ ledger migrate --back)", on)
	}
	if w.Engine != nil {
		cfg := *w.Engine
		cfg.Warn = w.warnf
		if ew, err = engine.OpenWriter(ctx, l, cfg); err != nil {
			return err
		}
		defer ew.Close()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tlsConfig, err := w.tlsConfig(ctx)
	if err != nil {
		return err
	}
	if tlsConfig == nil && !loopbackListen(w.HTTP.Listen) {
		return &exitcode.Error{Code: exitcode.Usage,
			Err:   fmt.Errorf("--listen %s: plain HTTP only on a loopback address (127.0.0.1, ::1, localhost); give --tls-cert and --tls-key to serve HTTPS", w.HTTP.Listen),
			Hints: []string{"behind a reverse proxy that terminates TLS on this host, listen on 127.0.0.1"}}
	}
	h := w.HTTP
	h.Handler, h.MaxBody, h.Refused, h.TLS = svc, svc.Options().MaxBodyBytes, svc.Refused, tlsConfig
	LimitHeap(2*int64(h.Limits.MaxInFlight)*h.MaxBody + WriterBase)
	ready := h.Ready
	h.Ready = func(addr string) error {
		if err := ready(addr); err != nil {
			return err
		}
		go func() {
			a, err := svc.Load()
			if err != nil {
				cancel(&verify.LoadError{Err: err})
				return
			}
			// Loading (a replay, when the state was not persisted)
			// allocated what the service no longer holds: give it back
			// too, so that what it keeps is what it holds.
			debug.FreeOSMemory()
			if ew != nil {
				ew.SetExtend(a.Extend)
			}
			if w.Loaded != nil {
				w.Loaded(a)
			}
		}()
		return nil
	}
	err = h.Run(ctx)
	if cause := context.Cause(ctx); err == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// loopbackListen reports whether a --listen address is on loopback.
func loopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && endpoint.IsLoopbackHost(host)
}

// tlsConfig loads w.TLS (nil when no certificate is given), and reloads
// the certificate and key on SIGHUP until ctx is done: a pair that fails
// to load is reported (Warn) and the one before it kept.
func (w Writer) tlsConfig(ctx context.Context) (*tls.Config, error) {
	if w.TLS.Cert == "" && w.TLS.Key == "" {
		if w.TLS.ClientCA != "" {
			return nil, exitcode.Usagef("--client-ca needs --tls-cert and --tls-key: client certificates come with TLS")
		}
		// SIGHUP would end the process: there is nothing to reload.
		w.onHUP(ctx, func() { w.warnf("SIGHUP: nothing to reload (no --tls-cert); the service goes on") })
		return nil, nil
	}
	if w.TLS.Cert == "" || w.TLS.Key == "" {
		return nil, exitcode.Usagef("--tls-cert and --tls-key come together")
	}
	var current atomic.Pointer[tls.Certificate]
	load := func() error {
		c, err := tls.LoadX509KeyPair(w.TLS.Cert, w.TLS.Key)
		if err != nil {
			return exitcode.Input(fmt.Errorf("--tls-cert %s, --tls-key %s: %w", w.TLS.Cert, w.TLS.Key, err))
		}
		current.Store(&c)
		return nil
	}
	if err := load(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return current.Load(), nil }}
	if w.TLS.ClientCA != "" {
		pem, err := os.ReadFile(w.TLS.ClientCA)
		if err != nil {
			return nil, exitcode.Input(fmt.Errorf("--client-ca: %w", err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, exitcode.Input(fmt.Errorf("--client-ca %s: no PEM certificate in it", w.TLS.ClientCA))
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	w.onHUP(ctx, func() {
		if err := load(); err != nil {
			w.warnf("SIGHUP: the certificate was not reloaded, the one before it is served: %v", err)
		}
	})
	return cfg, nil
}

// onHUP calls do on each SIGHUP until ctx is done.
func (w Writer) onHUP(ctx context.Context, do func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				do()
			}
		}
	}()
}

func (w Writer) warnf(format string, args ...any) {
	if w.Warn != nil {
		w.Warn(format, args...)
	}
}
