package httpbound

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
)

// Options are a Server's hooks; the zero value has none.
type Options struct {
	// Refused, when set, is called once for every refusal, with its rule,
	// from the goroutine that refuses (many at once).
	Refused func(Reason)
	// ErrorLog receives net/http's own messages (a failed accept, a
	// malformed request); nil discards them, so that a flood of clients
	// cannot flood the server's log.
	ErrorLog *log.Logger
	// TLS, when set, serves HTTPS with it (its certificates, or
	// GetCertificate, set): the handshake runs in the connection's own
	// goroutine under ReadHeaderTimeout, and a connection past MaxConns
	// or MaxConnsPerClient is closed at once, without an answer (its
	// client speaks TLS, not the plain refusal).
	TLS *tls.Config
}

// Server is an http.Server with every bound of Limits (see the package
// doc). Its methods may be called from any goroutine.
type Server struct {
	limits   Limits
	opts     Options
	http     *http.Server
	conns    *counter // open connections, by client
	requests *counter // requests in flight, by client
	bodies   *counter // bytes of request bodies held, by client (readBody)
}

// New returns a Server answering with h under l (zero fields at their
// defaults), or an error wrapping ErrLimits. h sees a request only once
// its headers and its whole body are read (readBody) and its client is
// within the limits; a body over MaxBodyBytes is answered 413 without it.
func New(h http.Handler, l Limits, opts Options) (*Server, error) {
	l, err := l.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{limits: l, opts: opts, conns: newCounter(l.MaxConns, l.MaxConnsPerClient),
		requests: newCounter(l.MaxInFlight, l.MaxPerClient),
		bodies:   newCounter(l.MaxInFlight*int(l.MaxBodyBytes), l.MaxPerClient*int(l.MaxBodyBytes))}
	logger := opts.ErrorLog
	if logger == nil {
		logger = log.New(io.Discard, "", 0)
	}
	s.http = &http.Server{
		Handler:           &bounded{s: s, next: h},
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ErrorLog:          logger,
	}
	// HTTP/1.1 only, over TLS too: HTTP/2 carries up to 250 streams on
	// one connection, each holding memory the connection bounds do not
	// count (a hostile review held 973 MiB with stalled streams).
	s.http.Protocols = new(http.Protocols)
	s.http.Protocols.SetHTTP1(true)
	return s, nil
}

// Limits returns the server's limits, defaults filled in.
func (s *Server) Limits() Limits { return s.limits }

// Serve accepts connections on ln, within MaxConns and
// MaxConnsPerClient, and serves them until Shutdown or Close; it then
// returns http.ErrServerClosed, else the error that stopped it.
func (s *Server) Serve(ln net.Listener) error {
	if s.opts.TLS != nil {
		s.http.TLSConfig = s.opts.TLS.Clone()
		s.http.TLSConfig.NextProtos = []string{"http/1.1"} // never h2, even when the caller's config offers it
		return s.http.ServeTLS(&listener{Listener: ln, s: s}, "", "")
	}
	return s.http.Serve(&listener{Listener: ln, s: s})
}

// Shutdown stops accepting, waits for the requests in flight until ctx
// is done, and closes every connection (http.Server.Shutdown).
func (s *Server) Shutdown(ctx context.Context) error { return s.http.Shutdown(ctx) }

// Close closes the listener and every connection at once.
func (s *Server) Close() error { return s.http.Close() }

// refused counts one refusal.
func (s *Server) refused(r Reason) {
	if s.opts.Refused != nil {
		s.opts.Refused(r)
	}
}

// bounded is the handler within the request limits.
type bounded struct {
	s    *Server
	next http.Handler
}

func (b *bounded) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l := b.s.limits
	ip := clientIP(r.RemoteAddr)
	if r.ContentLength > l.MaxBodyBytes {
		b.refuse(w, ReasonBodySize, ip)
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		held, reason := b.readBody(w, r, ip)
		defer b.s.bodies.releaseN(ip, held)
		if reason != "" {
			b.refuse(w, reason, ip)
			return
		}
	}
	switch b.s.requests.acquire(ip) {
	case errTotal:
		b.refuse(w, ReasonInFlight, ip)
		return
	case errClient:
		b.refuse(w, ReasonPerClient, ip)
		return
	}
	defer b.s.requests.release(ip)
	b.next.ServeHTTP(w, r)
}

func (b *bounded) refuse(w http.ResponseWriter, reason Reason, ip string) {
	b.s.refused(reason)
	refusalFor(reason, b.s.limits, ip).write(w, b.s.limits)
}

// listener admits connections within MaxConns and MaxConnsPerClient; it
// answers the others itself and closes them.
type listener struct {
	net.Listener
	s *Server
}

func (ln *listener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := clientIP(c.RemoteAddr().String())
		reason := ReasonConns
		switch ln.s.conns.acquire(ip) {
		case nil:
			return &conn{Conn: c, release: func() { ln.s.conns.release(ip) }}, nil
		case errClient:
			reason = ReasonConnsPerClient
		}
		ln.s.refused(reason)
		if ln.s.opts.TLS != nil {
			c.Close()
			continue
		}
		refusalFor(reason, ln.s.limits, ip).writeRaw(c, ln.s.limits)
	}
}

// conn releases its place when it is closed (once: net/http may close
// a connection twice).
type conn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *conn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// clientIP is the IP address of a host:port address (the address itself
// when it has no port).
func clientIP(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}
