package verify_test

import (
	"crypto/rand"
	"crypto/x509"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/token"
	"github.com/writ-ledger/writ/verify"
)

// TestVerifyToken: no ledger is an *AuthorityError; with the authority
// read, a malformed token is token.ErrMalformed and an issuer the ledger
// does not hold a refusal, neither an *AuthorityError; no result either
// way.
func TestVerifyToken(t *testing.T) {
	var ae *verify.AuthorityError
	d := ledgerdir.Dir(filepath.Join(t.TempDir(), "ledger"))
	if res, err := verify.VerifyToken(d, verify.Trust{}, x509.NewCertPool(), "https://id.example", "a", "x.y.z"); res != nil || !errors.As(err, &ae) {
		t.Fatalf("no ledger: %+v, %v, want an *AuthorityError", res, err)
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	rootKey := testkit.Key(t, 1)
	r := testkit.Root(1, rootKey)
	r.IssuedAt, r.Expires = time.Now().Add(-time.Hour).Unix(), time.Now().Add(time.Hour).Unix()
	a, err := verify.InitAuthority(d, "example.com/token", ledgerdir.NewKey{Recipients: []age.Recipient{id.Recipient()}, Rand: rand.Reader}, testkit.Seal(t, r, rootKey))
	if err != nil {
		t.Fatal(err)
	}
	a.Log.Close()
	res, err := verify.VerifyToken(d, verify.Trust{}, x509.NewCertPool(), "https://id.example", "a", "not a token")
	if res != nil || !errors.Is(err, token.ErrMalformed) || errors.As(err, &ae) {
		t.Errorf("malformed token: %+v, %v", res, err)
	}
	res, err = verify.VerifyToken(d, verify.Trust{}, x509.NewCertPool(), "https://id.example", "a", "eyJhbGciOiJFZERTQSJ9.e30.AA")
	if res != nil || err == nil || errors.As(err, &ae) {
		t.Errorf("unknown issuer: %+v, %v", res, err)
	}
}

// TestExplain: no ledger is an *AuthorityError with no explanation; a
// key the root never delegated to is denied, with the explanation.
func TestExplain(t *testing.T) {
	var ae *verify.AuthorityError
	d := ledgerdir.Dir(filepath.Join(t.TempDir(), "ledger"))
	req := delegation.Request{Key: testkit.Key(t, 5).Public(), Action: schemas.Action("instruct"), Stream: "s", Machine: "m", At: time.Now()}
	if e, err := verify.Explain(d, verify.Trust{}, req); e != nil || !errors.As(err, &ae) {
		t.Fatalf("no ledger: %+v, %v, want an *AuthorityError", e, err)
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	rootKey := testkit.Key(t, 1)
	r := testkit.Root(1, rootKey)
	r.IssuedAt, r.Expires = time.Now().Add(-time.Hour).Unix(), time.Now().Add(time.Hour).Unix()
	a, err := verify.InitAuthority(d, "example.com/explain", ledgerdir.NewKey{Recipients: []age.Recipient{id.Recipient()}, Rand: rand.Reader}, testkit.Seal(t, r, rootKey))
	if err != nil {
		t.Fatal(err)
	}
	a.Log.Close()
	var den *delegation.Denial
	if e, err := verify.Explain(d, verify.Trust{}, req); e == nil || e.Allowed || !errors.As(err, &den) {
		t.Errorf("undelegated key: %+v, %v, want a *delegation.Denial", e, err)
	}
}
