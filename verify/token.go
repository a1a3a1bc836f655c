package verify

import (
	"context"
	"crypto/x509"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/token"
)

// TokenTimeout bounds a whole VerifyToken: the authority read and the
// issuer key fetch (5 s per stage, token.Fetcher) together.
const TokenTimeout = 30 * time.Second

// TokenResult is a bearer token that verified: `writ token verify`'s
// JSON result.
type TokenResult struct {
	Valid    bool     `json:"valid" doc:"true"`
	Issuer   string   `json:"issuer" doc:"the token's issuer"`
	Subject  string   `json:"subject" doc:"its subject"`
	Audience []string `json:"audience" doc:"its audiences"`
	Expires  string   `json:"expires" doc:"RFC 3339"`
	KeyID    string   `json:"kid" doc:"the issuer key that signed it"`
}

// AuthorityError is VerifyToken's error when the ledger's authority log
// could not be opened and verified the first time: the error of
// OpenAuthority, as it is (a damaged store, a busy log, no ledger).
type AuthorityError struct{ Err error }

func (e *AuthorityError) Error() string { return e.Err.Error() }
func (e *AuthorityError) Unwrap() error { return e.Err }

// VerifyToken checks the compact JWS bearer token raw for issuer and
// audience (token.Verify) against the authority log of the ledger
// directory d, opened under trust and read and verified in full: once
// now, and again inside any dial decision the issuer key fetch must make
// (token.Fetcher), whose TLS roots are roots. It takes at most
// TokenTimeout. Errors: *AuthorityError when the first read fails;
// token.Verify's otherwise (token.ErrMalformed for a token that is not
// one, any other error a token that does not verify).
func VerifyToken(d ledgerdir.Dir, trust Trust, roots *x509.CertPool, issuer, audience, raw string) (*TokenResult, error) {
	authority := func() (*delegation.State, error) {
		a, err := OpenAuthority(d, trust, nil)
		if err != nil {
			return nil, err
		}
		a.Log.Close()
		return a.State, nil
	}
	st, err := authority()
	if err != nil {
		return nil, &AuthorityError{err}
	}
	f := &token.Fetcher{Roots: roots, Authority: authority, Now: time.Now}
	ctx, cancel := context.WithTimeout(context.Background(), TokenTimeout)
	defer cancel()
	claims, err := token.Verify(ctx, st, f, issuer, audience, raw, time.Now())
	if err != nil {
		return nil, err
	}
	return &TokenResult{true, claims.Issuer, claims.Subject, claims.Audience, claims.Expires.Format(time.RFC3339), claims.KeyID}, nil
}
