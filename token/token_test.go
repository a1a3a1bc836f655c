package token_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/token"
)

const issuer = "https://idp.example"

// idp is an identity provider on loopback: a real TLS server (a test CA
// the fetcher is told to trust) serving a key set, counting fetches.
type idp struct {
	srv     *httptest.Server
	key     ed25519.PrivateKey
	fetches atomic.Int32
	roots   *x509.CertPool
}

func newIDP(t *testing.T) *idp {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	p := &idp{key: key}
	jwks, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: "k1", Algorithm: string(jose.EdDSA), Use: "sig"}}})
	mux := http.NewServeMux()
	mux.HandleFunc("/jwks.json", func(w http.ResponseWriter, r *http.Request) { p.fetches.Add(1); w.Write(jwks) })
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, p.srv.URL+"/jwks.json", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, token.MaxBody+1)) })
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	})
	p.srv = httptest.NewTLSServer(mux)
	t.Cleanup(p.srv.Close)
	p.roots = x509.NewCertPool()
	p.roots.AddCert(p.srv.Certificate())
	return p
}

// ledger returns an authority state: a root, and a root-signed issuer
// record for issuer naming jwksURI (none when jwksURI is ""), revoked
// when revoke is set.
func ledgerState(t *testing.T, jwksURI string, revoke bool) *delegation.State {
	t.Helper()
	root := testkit.Key(t, 1)
	st := delegation.NewState()
	apply := func(e []byte) {
		t.Helper()
		if _, err := st.Apply(e, testkit.Epoch); err != nil {
			t.Fatal(err)
		}
	}
	apply(testkit.Seal(t, testkit.Root(1, root), root))
	if jwksURI != "" {
		rec := testkit.Seal(t, &schemas.Issuer{V: 1, Issuer: issuer, JWKSURI: jwksURI, Audiences: []string{"writ"}, IssuedAt: testkit.Epoch.Add(-time.Hour).Unix()}, root)
		apply(rec)
		if revoke {
			sum := sha256.Sum256(rec)
			apply(testkit.Seal(t, &schemas.Revocation{V: 1, Target: "sha256:" + hex.EncodeToString(sum[:]), Reason: "moved", IssuedAt: testkit.Epoch.Add(-time.Minute).Unix()}, root))
		}
	}
	return st
}

func (p *idp) fetcher(st *delegation.State) *token.Fetcher {
	return &token.Fetcher{Roots: p.roots, Authority: func() (*delegation.State, error) { return st, nil }, Now: time.Now}
}

// sign makes a token with claims edited, signed by key (the IdP's when nil).
func (p *idp) sign(t *testing.T, key ed25519.PrivateKey, edit func(*jwt.Claims)) string {
	t.Helper()
	if key == nil {
		key = p.key
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	c := jwt.Claims{Issuer: issuer, Subject: "alice", Audience: jwt.Audience{"writ"},
		Expiry: jwt.NewNumericDate(testkit.Epoch.Add(time.Hour)), NotBefore: jwt.NewNumericDate(testkit.Epoch.Add(-time.Minute))}
	if edit != nil {
		edit(&c)
	}
	raw, err := jwt.Signed(s).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestGuard: which URIs the fetcher may reach, and why not.
func TestGuard(t *testing.T) {
	p := newIDP(t)
	good := p.srv.URL + "/jwks.json"
	u := strings.TrimPrefix(p.srv.URL, "https://127.0.0.1:")
	port, _ := strconv.Atoi(u)
	for _, tc := range []struct {
		name, recorded, fetched, issuer string
		want                            error
	}{
		{"the recorded loopback jwks_uri", good, good, issuer, nil},
		{"the same server without a record", "", good, issuer, token.ErrAddressInternal},
		{"a record for another issuer", good, good, "https://other.example", token.ErrAddressInternal},
		{"one byte different", good, p.srv.URL + "/jwks.jsoN", issuer, token.ErrAddressInternal},
		{"another path", good, p.srv.URL + "/big", issuer, token.ErrAddressInternal},
		{"a trailing slash", good, good + "/", issuer, token.ErrAddressInternal},
		{"a query and a fragment (never shown in errors)", good, good + "?secret=s3cr3t#frag", issuer, token.ErrAddressInternal},
		{"another port", good, "https://127.0.0.1:" + strconv.Itoa(port+1) + "/jwks.json", issuer, token.ErrAddressInternal},
		{"IPv4-mapped IPv6 loopback", good, "https://[::ffff:127.0.0.1]:" + u + "/jwks.json", issuer, token.ErrAddressInternal},
		{"http (a record cannot even name one)", good, "http://127.0.0.1:" + u + "/jwks.json", issuer, token.ErrNotHTTPS},
		{"a redirect to the recorded URI", p.srv.URL + "/redirect", p.srv.URL + "/redirect", issuer, token.ErrRedirect},
		{"a body of 1 MiB + 1 byte", p.srv.URL + "/big", p.srv.URL + "/big", issuer, token.ErrTooLarge},
		// No record can name these (schemas refuses it): the fetch refuses
		// them whatever the ledger holds.
		{"cloud metadata", good, "https://169.254.169.254/jwks.json", issuer, token.ErrAddressNever},
		{"IPv6 link-local", good, "https://[fe80::1]/jwks.json", issuer, token.ErrAddressNever},
		{"unspecified", good, "https://0.0.0.0:" + u + "/jwks.json", issuer, token.ErrAddressNever},
		{"multicast", good, "https://224.0.0.1/jwks.json", issuer, token.ErrAddressNever},
		{"metadata through NAT64", good, "https://[64:ff9b::a9fe:a9fe]/jwks.json", issuer, token.ErrAddressNever},
		{"loopback through 6to4", good, "https://[2002:7f00:1::1]:" + u + "/jwks.json", issuer, token.ErrAddressInternal},
		{"IPv4-compatible loopback", good, "https://[::7f00:1]:" + u + "/jwks.json", issuer, token.ErrAddressInternal},
		{"SIIT loopback", good, "https://[::ffff:0:7f00:1]:" + u + "/jwks.json", issuer, token.ErrAddressInternal},
		{"site-local", good, "https://[fec0::1]:" + u + "/jwks.json", issuer, token.ErrAddressInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := p.fetcher(ledgerState(t, tc.recorded, false))
			keys, err := f.KeySet(context.Background(), tc.issuer, tc.fetched)
			if !errors.Is(err, tc.want) || (err == nil) != (keys != nil) {
				t.Fatalf("KeySet = %v, %v; want %v", keys != nil, err, tc.want)
			}
			if err != nil && (strings.Contains(err.Error(), "?") || strings.Contains(err.Error(), "#") || strings.Contains(err.Error(), "s3cr3t")) {
				t.Fatalf("the error shows a query or fragment: %v", err)
			}
		})
	}
}

// TestGuardRevokedAndThreshold: a revoked record, and a record with one
// signature under a 2-of-3 root (the ledger refuses it), open nothing.
func TestGuardRevokedAndThreshold(t *testing.T) {
	p := newIDP(t)
	good := p.srv.URL + "/jwks.json"
	f := p.fetcher(ledgerState(t, good, true))
	if _, err := f.KeySet(context.Background(), issuer, good); !errors.Is(err, token.ErrAddressInternal) || !strings.Contains(err.Error(), "no unrevoked issuer record") {
		t.Fatalf("revoked record: %v", err)
	}
	k1, k2, k3 := testkit.Key(t, 1), testkit.Key(t, 2), testkit.Key(t, 3)
	st := delegation.NewState()
	if _, err := st.Apply(testkit.Seal(t, testkit.Root(2, k1, k2, k3), k1, k2), testkit.Epoch); err != nil {
		t.Fatal(err)
	}
	rec := testkit.Seal(t, &schemas.Issuer{V: 1, Issuer: issuer, JWKSURI: good, Audiences: []string{"writ"}, IssuedAt: testkit.Epoch.Add(-time.Hour).Unix()}, k1)
	var re *delegation.RecordError
	if _, err := st.Apply(rec, testkit.Epoch); !errors.As(err, &re) || re.Rule != delegation.RuleThreshold {
		t.Fatalf("an issuer record with 1 of 2 root signatures: %v, want %s", err, delegation.RuleThreshold)
	}
	f = p.fetcher(st)
	if _, err := f.KeySet(context.Background(), issuer, good); !errors.Is(err, token.ErrAddressInternal) {
		t.Fatalf("1-of-3 record: %v", err)
	}
}

// TestFetchErrorsHideQuery: a fetch that fails (nothing listens) names
// the host and path, never the query a record may carry.
func TestFetchErrorsHideQuery(t *testing.T) {
	uri := "https://127.0.0.1:1/jwks.json?client_secret=s3cr3t"
	p := newIDP(t)
	_, err := p.fetcher(ledgerState(t, uri, false)).KeySet(context.Background(), issuer, uri)
	if !errors.Is(err, token.ErrFetch) || strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "?") {
		t.Fatalf("failed fetch: %v", err)
	}
}

// TestStaleKeySetExpires: when refetching fails, the last good key set
// stands in for MaxStale after it was fetched, not forever.
func TestStaleKeySetExpires(t *testing.T) {
	p := newIDP(t)
	good := p.srv.URL + "/jwks.json"
	clock := time.Now()
	f := p.fetcher(ledgerState(t, good, false))
	f.Now = func() time.Time { return clock }
	if _, err := f.KeySet(context.Background(), issuer, good); err != nil {
		t.Fatal(err)
	}
	p.srv.Close() // the endpoint now fails
	clock = clock.Add(token.MinInterval + time.Second)
	if k, err := f.KeySet(context.Background(), issuer, good); err != nil || k == nil {
		t.Fatalf("within MaxStale: %v", err)
	}
	clock = clock.Add(token.MaxStale)
	if _, err := f.KeySet(context.Background(), issuer, good); !errors.Is(err, token.ErrFetch) || !strings.Contains(err.Error(), "older than") {
		t.Fatalf("after MaxStale: %v", err)
	}
}

// TestProxyIgnored: HTTPS_PROXY names a listening proxy; it sees no
// connection, and the fetch goes to the recorded address itself.
func TestProxyIgnored(t *testing.T) {
	p := newIDP(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var seen atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			seen.Add(1)
			c.Close()
		}
	}()
	t.Setenv("HTTPS_PROXY", "http://"+ln.Addr().String())
	t.Setenv("https_proxy", "http://"+ln.Addr().String())
	good := p.srv.URL + "/jwks.json"
	if _, err := p.fetcher(ledgerState(t, good, false)).KeySet(context.Background(), issuer, good); err != nil {
		t.Fatal(err)
	}
	if seen.Load() != 0 {
		t.Fatalf("the proxy saw %d connections", seen.Load())
	}
}

// TestStall: a server that stalls after the handshake is given up on
// within a stage's time.
func TestStall(t *testing.T) {
	p := newIDP(t)
	uri := p.srv.URL + "/stall"
	start := time.Now()
	_, err := p.fetcher(ledgerState(t, uri, false)).KeySet(context.Background(), issuer, uri)
	if !errors.Is(err, token.ErrFetch) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("stalled server: %v", err)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Fatalf("refused after %s, want within 6 s", d)
	}
}

// TestVerify: tokens, and the fetch cache.
func TestVerify(t *testing.T) {
	p := newIDP(t)
	good := p.srv.URL + "/jwks.json"
	st := ledgerState(t, good, false)
	f := p.fetcher(st)
	ctx, now := context.Background(), testkit.Epoch
	c, err := token.Verify(ctx, st, f, issuer, "writ", p.sign(t, nil, nil), now)
	if err != nil || c.Subject != "alice" || c.KeyID != "k1" {
		t.Fatalf("valid token: %+v %v", c, err)
	}
	if _, err := token.Verify(ctx, st, f, issuer, "", p.sign(t, nil, nil), now); err != nil {
		t.Fatalf("valid token, no audience asked: %v", err)
	}
	if p.fetches.Load() != 1 {
		t.Fatalf("two verifications within 30 s fetched %d times", p.fetches.Load())
	}
	_, stranger, _ := ed25519.GenerateKey(rand.Reader)
	for _, tc := range []struct {
		name, raw, audience, rule string
		want                      error
	}{
		{"wrong audience", p.sign(t, nil, func(c *jwt.Claims) { c.Audience = jwt.Audience{"other"} }), "", "aud:", token.ErrInvalid},
		{"audience not in the record", p.sign(t, nil, nil), "other", "audience:", token.ErrInvalid},
		{"expired", p.sign(t, nil, func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(now.Add(-2 * time.Minute)) }), "writ", "exp:", token.ErrInvalid},
		{"not yet valid", p.sign(t, nil, func(c *jwt.Claims) { c.NotBefore = jwt.NewNumericDate(now.Add(2 * time.Minute)) }), "writ", "nbf:", token.ErrInvalid},
		{"no expiry", p.sign(t, nil, func(c *jwt.Claims) { c.Expiry = nil }), "writ", "exp:", token.ErrInvalid},
		{"another issuer's claim", p.sign(t, nil, func(c *jwt.Claims) { c.Issuer = "https://evil.example" }), "writ", "iss:", token.ErrInvalid},
		{"a key not in the set", p.sign(t, stranger, nil), "writ", "signature:", token.ErrInvalid},
		{"garbage", "not.a.token", "writ", "", token.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := token.Verify(ctx, st, f, issuer, tc.audience, tc.raw, now)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.rule) {
				t.Fatalf("Verify = %v, want %v with %q", err, tc.want, tc.rule)
			}
			if len(tc.raw) > 20 && strings.Contains(err.Error(), tc.raw[:20]) {
				t.Fatalf("the error carries the token")
			}
		})
	}
	if _, err := token.Verify(ctx, ledgerState(t, "", false), f, issuer, "writ", p.sign(t, nil, nil), now); !errors.Is(err, token.ErrInvalid) || !strings.Contains(err.Error(), "unknown-issuer") {
		t.Fatalf("no record: %v", err)
	}
	// The issuer record stands on the root: once the root has expired, a
	// token that is otherwise valid is refused (its own exp set past it).
	later := time.Unix(st.Root().Record.Expires, 0)
	late := p.sign(t, nil, func(c *jwt.Claims) {
		c.IssuedAt, c.NotBefore, c.Expiry = jwt.NewNumericDate(later), jwt.NewNumericDate(later), jwt.NewNumericDate(later.Add(time.Hour))
	})
	if _, err := token.Verify(ctx, st, f, issuer, "writ", late, later); !errors.Is(err, token.ErrInvalid) || !strings.Contains(err.Error(), "root-expired") {
		t.Fatalf("a token under an expired root: %v; want root-expired", err)
	}
}
