package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/rogpeppe/go-internal/testscript"
)

// idpKeys holds each script's identity provider signing key, by $WORK.
var idpKeys sync.Map

// cmdIDPStart starts an identity provider on loopback for the script: a
// real TLS server serving its key set at /jwks.json. It writes the test
// CA to ca.pem and sets $IDP to the server's URL: idp-start
func cmdIDPStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: idp-start")
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	ts.Check(err)
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: "k1", Algorithm: string(jose.EdDSA), Use: "sig"}}})
	ts.Check(err)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jwks.json" {
			http.NotFound(w, r)
			return
		}
		w.Write(jwks)
	}))
	ts.Defer(srv.Close)
	ts.Check(os.WriteFile(ts.MkAbs("ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644))
	ts.Setenv("IDP", srv.URL)
	idpKeys.Store(ts.Getenv("WORK"), key)
}

// cmdIDPToken writes a token signed by the script's identity provider for
// issuer https://idp.example and audience writ, valid for an hour, or
// expired an hour ago with "expired": idp-token FILE [expired]
func cmdIDPToken(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: idp-token FILE [expired]")
	}
	k, ok := idpKeys.Load(ts.Getenv("WORK"))
	if !ok {
		ts.Fatalf("idp-start first")
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: k.(ed25519.PrivateKey)}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	ts.Check(err)
	exp := time.Now().Add(time.Hour)
	if len(args) == 2 && args[1] == "expired" {
		exp = time.Now().Add(-time.Hour)
	}
	raw, err := jwt.Signed(s).Claims(jwt.Claims{Issuer: "https://idp.example", Subject: "alice", Audience: jwt.Audience{"writ"}, Expiry: jwt.NewNumericDate(exp)}).Serialize()
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(raw), 0o600))
}
