// Package token verifies bearer tokens (JWS, RFC 7515; JWT, RFC 7519)
// from an external identity provider named by a root-signed issuer record
// in the ledger, and fetches the issuer's keys (JWKS, RFC 7517) through a
// guard against server-side request forgery: https only, no redirect, no
// proxy, bounded in time and size, and an address check at connect time
// on the address actually dialled.
//
// The address rule is package internal/endpoint's, the one schemas
// applies to an issuer record's URLs, so a record writ signs is never
// refused by its fetch for its literal address or port. The URL's port
// must be 1 to 65535, and a literal address host is judged before
// anything is dialled; every address dialled (a host name's, once
// resolved) is judged again. Link-local (169.254.0.0/16, fe80::/10, where
// cloud metadata lives), multicast, unspecified, "this network"
// (0.0.0.0/8) and broadcast addresses are refused always, before anything
// else is consulted; an IPv4-mapped, NAT64 or 6to4 address is judged by
// the IPv4 address it carries. Loopback, private (RFC 1918, fc00::/7) and
// shared (100.64.0.0/10) addresses are refused unless the URI being
// fetched is, byte for byte, the jwks_uri of the root-signed, unrevoked
// issuer record of the issuer whose token is verified; that record is
// re-read from the ledger and its signatures re-verified inside the dial
// decision. Nothing else opens them: no flag, setting or environment
// variable.
package token

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/endpoint"
)

// Limits of a key fetch.
const (
	StageTimeout = 5 * time.Second  // each of dial, TLS handshake, headers, body
	MaxBody      = 1 << 20          // bytes of a JWKS response
	MinInterval  = 30 * time.Second // between fetches of one endpoint
)

// Errors a caller branches on. Each is wrapped with the rule's detail: the
// class of address, the stage, the host (never a query or fragment).
var (
	ErrAddressNever    = endpoint.ErrNever // the rule schemas applies to a record's URLs too
	ErrAddressInternal = errors.New("address-internal: loopback and private addresses are dialled only for a recorded jwks_uri")
	ErrNotHTTPS        = errors.New("scheme: the key set is fetched over https only")
	ErrRedirect        = errors.New("redirect: no redirect is followed")
	ErrTooLarge        = errors.New("body-too-large: a key set is at most 1 MiB")
	ErrFetch           = errors.New("fetch")
)

// Authority returns the authority state, re-read from the ledger and
// re-verified, signatures included (the product reads the ledger
// directory; tests build one). The guard calls it inside every dial
// decision that needs a record.
type Authority func() (*delegation.State, error)

// Fetcher fetches and caches issuers' key sets. Safe for concurrent use.
type Fetcher struct {
	Roots     *x509.CertPool   // TLS roots; nil means the system's
	Authority Authority        // the ledger, for records that open internal addresses
	Now       func() time.Time // the clock; time.Now in the product

	mu    sync.Mutex
	cache map[string]*cached // by jwks_uri
}

// MaxStale is how long after it was fetched a key set still stands in
// when a later fetch fails: a key the issuer removed stops verifying
// within this time even if its endpoint is made to fail.
const MaxStale = time.Hour

type cached struct {
	mu      sync.Mutex          // one fetch of this endpoint at a time
	keys    *jose.JSONWebKeySet // the last good key set, nil if none
	good    time.Time           // when it was fetched
	attempt time.Time           // the last fetch, good or not
	err     error               // its error, if it failed
}

// KeySet returns the key set at jwksURI for issuer: fetched at most once
// per MinInterval per endpoint, later calls served from the last good key
// set (or the last error, when there is none). Errors wrap ErrNotHTTPS,
// ErrAddressNever, ErrAddressInternal, ErrRedirect, ErrTooLarge or
// ErrFetch (for a port out of range too), and name the host, never a
// query or fragment.
func (f *Fetcher) KeySet(ctx context.Context, issuer, jwksURI string) (*jose.JSONWebKeySet, error) {
	f.mu.Lock()
	if f.cache == nil {
		f.cache = map[string]*cached{}
	}
	c := f.cache[jwksURI]
	if c == nil {
		c = &cached{}
		f.cache[jwksURI] = c
	}
	f.mu.Unlock()
	c.mu.Lock() // callers of one endpoint share its fetch; others do not wait
	defer c.mu.Unlock()
	now := f.Now()
	fresh := func() bool { return c.keys != nil && now.Sub(c.good) < MaxStale }
	if !c.attempt.IsZero() && now.Sub(c.attempt) < MinInterval {
		if fresh() {
			return c.keys, nil
		}
		return nil, c.err
	}
	keys, err := f.fetch(ctx, issuer, jwksURI)
	c.attempt, c.err = now, err
	if err == nil {
		c.keys, c.good = keys, now
		return keys, nil
	}
	if fresh() {
		return c.keys, nil // the last good key set stands in, for a while
	}
	if c.keys != nil {
		c.err = fmt.Errorf("%w (the last good key set is older than %s)", err, MaxStale)
	}
	return nil, c.err
}

// where names a URL for messages: scheme, host and path only.
func where(u *url.URL) string { return u.Scheme + "://" + u.Host + u.EscapedPath() }

func (f *Fetcher) fetch(ctx context.Context, issuer, jwksURI string) (*jose.JSONWebKeySet, error) {
	u, err := url.Parse(jwksURI)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: jwks_uri is not an absolute URL", ErrFetch)
	}
	if u.Scheme != "https" || u.User != nil {
		return nil, fmt.Errorf("%w: %s", ErrNotHTTPS, u.Scheme+"://"+u.Host)
	}
	if err := endpoint.Check(u); err != nil { // before any dial: the rule a record is signed under
		if errors.Is(err, ErrAddressNever) {
			return nil, fmt.Errorf("%w (%s)", err, where(u))
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrFetch, where(u), err)
	}
	g := &guard{uri: jwksURI, issuer: issuer, authority: f.Authority}
	dialer := &net.Dialer{Timeout: StageTimeout, Control: g.control}
	transport := &http.Transport{
		Proxy:                  nil, // a proxy would dial for us and hide the target
		DialContext:            dialer.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: f.Roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    StageTimeout,
		ResponseHeaderTimeout:  StageTimeout,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 64 << 10,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error { return ErrRedirect }}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, jwksURI, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: cannot make the request", ErrFetch, where(u))
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		for _, e := range []error{ErrAddressNever, ErrAddressInternal, ErrRedirect} {
			if errors.Is(err, e) {
				return nil, fmt.Errorf("%w (%s)", g.refused(e), where(u))
			}
		}
		return nil, fmt.Errorf("%w: %s: %s", ErrFetch, where(u), stage(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 3 {
		return nil, fmt.Errorf("%w: %s answered %s", ErrRedirect, where(u), resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s answered %s", ErrFetch, where(u), resp.Status)
	}
	timer := time.AfterFunc(StageTimeout, cancel) // the body stage
	defer timer.Stop()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: reading the body: %s", ErrFetch, where(u), stage(err))
	}
	if len(body) > MaxBody {
		return nil, fmt.Errorf("%w: %s sent more than %d bytes", ErrTooLarge, where(u), MaxBody)
	}
	var keys jose.JSONWebKeySet
	if err := json.Unmarshal(body, &keys); err != nil {
		return nil, fmt.Errorf("%w: %s: not a JWK set: %w", ErrFetch, where(u), err)
	}
	return &keys, nil
}

// stage names the stage a fetch error happened in.
func stage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text carries the whole URL, query included
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timed out (each stage has %s)", StageTimeout)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("timed out (each stage has %s)", StageTimeout)
	}
	return err.Error()
}

// guard judges each address the dialer is about to connect to.
type guard struct {
	uri, issuer string
	authority   Authority
	mu          sync.Mutex
	last        error // the refusal, with its address class
}

func (g *guard) refused(e error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last != nil && errors.Is(g.last, e) {
		return g.last // with the address and why
	}
	return e
}

// control is the net.Dialer's Control: it runs after the name was
// resolved, on the address about to be dialled.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	err := g.judge(address)
	if err != nil {
		g.mu.Lock()
		g.last = err
		g.mu.Unlock()
	}
	return err
}

// judge applies the endpoint rule to the address about to be dialled.
func (g *guard) judge(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot read the address %q", ErrAddressNever, address)
	}
	switch class, a := endpoint.Classify(ap.Addr()); class {
	case endpoint.Never:
		return fmt.Errorf("%w: %s", ErrAddressNever, a)
	case endpoint.Internal:
		if err := g.recorded(); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrAddressInternal, a, err)
		}
	}
	return nil
}

// recorded re-reads the ledger, re-verifying it, and returns nil only if
// the issuer's root-signed, unrevoked record names exactly this URI.
func (g *guard) recorded() error {
	if g.authority == nil {
		return errors.New("no ledger to read an issuer record from")
	}
	st, err := g.authority()
	if err != nil {
		return fmt.Errorf("reading the ledger: %w", err)
	}
	e, denial := st.Issuer(g.issuer, time.Now())
	switch {
	case denial != nil:
		return fmt.Errorf("%s: %s", denial.Rule, denial.Reason)
	case e == nil:
		return fmt.Errorf("no unrevoked issuer record for %s", g.issuer)
	case e.Record.JWKSURI != g.uri:
		return fmt.Errorf("the issuer record (ledger index %d) names another jwks_uri", e.Index)
	}
	return nil
}
