package token

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/endpoint"
)

// FuzzJudge: any address the dialer could hand over is judged without a
// panic, and a link-local, multicast or unspecified address is never let
// through, whatever the ledger says.
func FuzzJudge(f *testing.F) {
	for _, s := range []string{"127.0.0.1:443", "[::ffff:169.254.169.254]:443", "[fe80::1%eth0]:443", "0.0.0.0:1", "[::]:443", "224.0.0.1:443", "10.0.0.1:443", "8.8.8.8:443", "[::ffff:127.0.0.1]:8443", "garbage",
		"169.254.169.254:443", "[fe80::1]:443", "255.255.255.255:443", "[64:ff9b::a9fe:a9fe]:443"} {
		f.Add(s)
	}
	open := &guard{uri: "https://x/jwks.json", issuer: "https://x", authority: func() (*delegation.State, error) { return nil, errors.New("unused") }}
	f.Fuzz(func(t *testing.T, address string) {
		err := open.judge(address)
		ap, perr := netip.ParseAddrPort(address)
		if perr != nil {
			if err == nil {
				t.Fatalf("an unreadable address %q was let through", address)
			}
			return
		}
		_, a := endpoint.Classify(ap.Addr()) // the address judged: the IPv4 one an IPv6 one carries
		if (a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsUnspecified()) && !errors.Is(err, ErrAddressNever) {
			t.Fatalf("%q (%s) was not refused as never: %v", address, a, err)
		}
		if (a.IsLoopback() || a.IsPrivate()) && err == nil {
			t.Fatalf("%q (%s) was let through without a record", address, a)
		}
	})
}

// FuzzVerify: any token string is refused as malformed or invalid without
// a panic, and never accepted against an empty ledger.
func FuzzVerify(f *testing.F) {
	for _, s := range []string{"", "a.b.c", "eyJhbGciOiJFZERTQSJ9.e30.AA", "....", "eyJhbGciOiJub25lIn0.e30."} {
		f.Add(s)
	}
	st := delegation.NewState()
	fe := &Fetcher{Now: time.Now}
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := Verify(context.Background(), st, fe, "https://idp.example", "", raw, time.Now())
		if err == nil || c != nil || !(errors.Is(err, ErrMalformed) || errors.Is(err, ErrInvalid)) {
			t.Fatalf("Verify(%q) = %v, %v", raw, c, err)
		}
	})
}
