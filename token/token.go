package token

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/writ-ledger/writ/delegation"
)

// Skew is the clock skew allowed on exp and nbf (RFC 7519 §4.1.4, §4.1.5).
const Skew = time.Minute

// MaxToken bounds a token, in bytes.
const MaxToken = 64 << 10

// Algorithms are the JWS algorithms accepted (RFC 7518 §3.1, RFC 8037):
// asymmetric only, so that a key set can never be used as an HMAC secret.
var Algorithms = []jose.SignatureAlgorithm{jose.EdDSA, jose.ES256, jose.ES384, jose.ES512, jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512}

// Errors: ErrMalformed (the token cannot be read: exit 2) and ErrInvalid
// (it can, and fails a check: exit 1), each wrapped with the rule.
var (
	ErrMalformed = errors.New("malformed token")
	ErrInvalid   = errors.New("invalid token")
)

// Claims are the checked claims of a valid token.
type Claims struct {
	Issuer    string    `json:"iss"`
	Subject   string    `json:"sub"`
	Audience  []string  `json:"aud"`
	Expires   time.Time `json:"exp"`
	NotBefore time.Time `json:"nbf,omitzero"`
	KeyID     string    `json:"kid"`
}

// Verify checks a compact JWS bearer token for issuer: the ledger st holds
// a root-signed, unrevoked issuer record for it; the token's signature
// verifies under a key of the record's jwks_uri (fetched through f); iss
// is the issuer; aud includes audience when given, and one of the
// record's audiences; exp and nbf hold at now within Skew. The token is
// never logged, stored or put in an error. Errors wrap ErrMalformed or
// ErrInvalid (with the fetch's own errors for a key set that could not be
// had).
func Verify(ctx context.Context, st *delegation.State, f *Fetcher, issuer, audience, raw string, now time.Time) (*Claims, error) {
	raw = strings.TrimSpace(raw)
	if len(raw) > MaxToken {
		return nil, fmt.Errorf("%w: over %d bytes", ErrMalformed, MaxToken)
	}
	tok, err := jwt.ParseSigned(raw, Algorithms)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	e, denial := st.Issuer(issuer, now)
	if denial != nil {
		return nil, fmt.Errorf("%w: %s: the issuer record stands on the root, and %s", ErrInvalid, denial.Rule, denial.Reason)
	}
	if e == nil {
		return nil, fmt.Errorf("%w: unknown-issuer: the ledger holds no unrevoked, root-signed issuer record for %s", ErrInvalid, issuer)
	}
	if audience != "" && !slices.Contains(e.Record.Audiences, audience) {
		return nil, fmt.Errorf("%w: audience: %q is not among the issuer record's audiences", ErrInvalid, audience)
	}
	keys, err := f.KeySet(ctx, issuer, e.Record.JWKSURI)
	if err != nil {
		return nil, fmt.Errorf("%w: key set: %w", ErrInvalid, err)
	}
	var kid string
	if len(tok.Headers) == 1 {
		kid = tok.Headers[0].KeyID
	}
	var c jwt.Claims
	if err := tok.Claims(keys, &c); err != nil {
		return nil, fmt.Errorf("%w: signature: no key of %s's key set (kid %q) verifies it: %w", ErrInvalid, issuer, kid, err)
	}
	expected := jwt.Expected{Issuer: issuer, AnyAudience: jwt.Audience(e.Record.Audiences), Time: now}
	if audience != "" {
		expected.AnyAudience = jwt.Audience{audience}
	}
	if c.Expiry == nil {
		return nil, fmt.Errorf("%w: exp: the token has no expiry", ErrInvalid)
	}
	if err := c.ValidateWithLeeway(expected, Skew); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, claimRule(err))
	}
	out := &Claims{Issuer: c.Issuer, Subject: c.Subject, Audience: c.Audience, Expires: c.Expiry.Time().UTC(), KeyID: kid}
	if c.NotBefore != nil {
		out.NotBefore = c.NotBefore.Time().UTC()
	}
	return out, nil
}

// claimRule names the claim a validation error is about.
func claimRule(err error) string {
	switch {
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return "iss: the token's issuer is not the one verified for"
	case errors.Is(err, jwt.ErrInvalidAudience):
		return "aud: the token is not for this audience"
	case errors.Is(err, jwt.ErrExpired):
		return fmt.Sprintf("exp: the token expired (skew allowed %s)", Skew)
	case errors.Is(err, jwt.ErrNotValidYet):
		return fmt.Sprintf("nbf: the token is not valid yet (skew allowed %s)", Skew)
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return fmt.Sprintf("iat: the token was issued in the future (skew allowed %s)", Skew)
	}
	return err.Error()
}
