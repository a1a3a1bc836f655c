package token_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/token"
)

// TestEndpointRule: each URL a hostile review found signed but never
// fetched is refused by the fetch before anything is dialled or the
// ledger is read, and refused by schemas as a record's jwks_uri with the
// same rule: writ signs no jwks_uri its fetch refuses for its address.
func TestEndpointRule(t *testing.T) {
	for _, tc := range []struct {
		uri, rule string
		want      error
	}{
		{"https://169.254.169.254/keys", "address-never", token.ErrAddressNever},
		{"https://0.0.0.0/keys", "address-never", token.ErrAddressNever},
		{"https://[fe80::1]/keys", "address-never", token.ErrAddressNever},
		{"https://224.0.0.1/keys", "address-never", token.ErrAddressNever},
		{"https://255.255.255.255/keys", "address-never", token.ErrAddressNever},
		{"https://[::ffff:169.254.169.254]/keys", "address-never", token.ErrAddressNever},
		{"https://idp.example:0/keys", "port", token.ErrFetch},
		{"https://idp.example:/keys", "port", token.ErrFetch},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			var reads atomic.Int32
			f := &token.Fetcher{Now: time.Now, Authority: func() (*delegation.State, error) {
				reads.Add(1)
				return nil, errors.New("unused")
			}}
			_, err := f.KeySet(context.Background(), issuer, tc.uri)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.rule+":") || reads.Load() != 0 {
				t.Fatalf("KeySet = %v (ledger read %d times); want %v naming %s", err, reads.Load(), tc.want, tc.rule)
			}
			rec := &schemas.Issuer{V: 1, Issuer: issuer, JWKSURI: tc.uri, Audiences: []string{"writ"}, IssuedAt: 1}
			var fe *schemas.FieldError
			if err := rec.Validate(); !errors.As(err, &fe) || fe.Field != "jwks_uri" || !strings.Contains(fe.Rule, tc.rule+":") {
				t.Fatalf("schemas: Validate = %v; want issuer.jwks_uri refused by %s", err, tc.rule)
			}
		})
	}
}
