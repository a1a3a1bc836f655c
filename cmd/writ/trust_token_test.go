package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/writ-ledger/writ/rules"
)

// TestTrustToken: `writ token verify --vkey` refuses a key that did not
// sign the ledger's authority log (exit 1, vkey-mismatch) whether the
// issuer is unknown to the ledger (nothing is fetched; the right values
// are a no too) or its key set is fetched (the right values verify the
// token). --ca-file only adds TLS roots, so a wrong one cannot be judged
// by itself: a provider whose certificate it does not root fails the
// fetch (exit 1), and where nothing is fetched it is not used.
func TestTrustToken(t *testing.T) {
	e := newTrustEnv(t)
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: "k1", Algorithm: string(jose.EdDSA), Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	idp := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(jwks) }))
	t.Cleanup(idp.Close)
	caPEM := func(name string, der []byte) string {
		return e.file(name, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	}
	ca, otherCA := caPEM("ca.pem", idp.Certificate().Raw), caPEM("other-ca.pem", selfSigned(t))
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	token, err := jwt.Signed(signer).Claims(jwt.Claims{Issuer: "https://idp.example", Subject: "alice", Audience: jwt.Audience{"writ"},
		Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	vk := assertion{"--vkey", e.vkey, e.otherVKey, rules.VKeyMismatch}
	state := func() string { return e.stored(e.writer) }
	base := []string{"token", "verify", "--ledger", e.writer, "--issuer", "https://idp.example", "--audience", "writ", token}
	for _, path := range []struct {
		name  string
		setup func()
		want  int
	}{
		{"unknown issuer", func() {}, 1},
		{"key set fetched", func() {
			e.must("issuer", "--key", e.path("root.key"), "--issuer", "https://idp.example", "--jwks-uri", idp.URL+"/jwks.json",
				"--audience", "writ", "--out", e.path("iss.cose"))
			e.must("ledger", "append", "--dir", e.writer, e.path("iss.cose"))
		}, 0},
	} {
		path.setup()
		label := "token verify " + path.name
		e.refuses(label, with(base, []string{"--ca-file", ca}), vk, state)
		e.passes(label, path.want, append(base, "--vkey", e.vkey, "--ca-file", ca)...)
		code, out, errs := e.writ(append(base, "--vkey", e.vkey, "--ca-file", otherCA)...)
		if code != 1 || strings.Contains(out, "valid") {
			t.Errorf("%s, --ca-file of another CA: exit %d, want 1\n%s%s", label, code, out, errs)
		}
	}
}

// selfSigned is a new self-signed CA certificate for 127.0.0.1 (DER),
// another than the one every httptest TLS server shares.
func selfSigned(t *testing.T) []byte {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "another CA"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		t.Fatal(err)
	}
	return der
}
