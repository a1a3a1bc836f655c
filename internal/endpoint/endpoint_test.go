package endpoint

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// hostile are the URLs a hostile review found signed but never fetched:
// each is refused by Check, with the error a caller branches on.
var hostile = []struct {
	uri  string
	want error
}{
	{"https://169.254.169.254/keys", ErrNever},
	{"https://0.0.0.0/keys", ErrNever},
	{"https://[fe80::1]/keys", ErrNever},
	{"https://224.0.0.1/keys", ErrNever},
	{"https://255.255.255.255/keys", ErrNever},
	{"https://[::ffff:169.254.169.254]/keys", ErrNever},
	{"https://idp.example:0/keys", ErrPort},
	{"https://idp.example:/keys", ErrPort},
}

func TestCheck(t *testing.T) {
	cases := append([]struct {
		uri  string
		want error
	}{
		{"https://idp.example/keys", nil},
		{"https://idp.example:443/keys", nil},
		{"https://idp.example:65535/keys", nil},
		{"https://localhost/keys", nil},                 // a host name: judged when dialled
		{"https://metadata.google.internal/keys", nil},  // likewise
		{"https://127.0.0.1:8443/keys", nil},            // internal: a record opens it
		{"https://10.0.0.1/keys", nil},                  // internal
		{"https://[::1]/keys", nil},                     // internal
		{"https://[2001:db8::1]:8443/keys", nil},        // public
		{"https://[::]/keys", ErrNever},                 // unspecified IPv6
		{"https://0.1.2.3/keys", ErrNever},              // "this network"
		{"https://[fe80::1%25eth0]/keys", ErrNever},     // link-local with a zone
		{"https://[fd00:ec2::254]/keys", ErrNever},      // AWS metadata over IPv6
		{"https://100.100.100.200/keys", ErrNever},      // Alibaba metadata
		{"https://100.100.100.201/keys", nil},           // its neighbour: shared, internal
		{"https://[ff02::1]/keys", ErrNever},            // IPv6 multicast
		{"https://[64:ff9b::a9fe:a9fe]/keys", ErrNever}, // metadata through NAT64
		{"https://[2002:a9fe:a9fe::1]/keys", ErrNever},  // metadata through 6to4
		{"https://[::a9fe:a9fe]/keys", ErrNever},        // IPv4-compatible metadata
		{"https://idp.example:65536/keys", ErrPort},
		{"https://idp.example:99999999999999999999/keys", ErrPort},
		{"https://[::1]:/keys", ErrPort},
		{"https://[::1]:0/keys", ErrPort},
	}, hostile...)
	for _, tc := range cases {
		u, err := url.Parse(tc.uri)
		if err != nil {
			t.Fatalf("%s: %v", tc.uri, err)
		}
		if err := Check(u); !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
			t.Errorf("Check(%s) = %v, want %v", tc.uri, err, tc.want)
		}
	}
}

func TestClassify(t *testing.T) {
	for s, want := range map[string]Class{
		"169.254.169.254": Never, "::ffff:169.254.169.254": Never, "255.255.255.255": Never, "0.0.0.0": Never,
		"224.0.0.1": Never, "fe80::1": Never, "::": Never, "ff01::1": Never,
		"127.0.0.1": Internal, "::ffff:127.0.0.1": Internal, "10.1.2.3": Internal, "100.64.0.1": Internal,
		"fd00::1": Internal, "fec0::1": Internal, "::1": Internal, "2002:7f00:1::1": Internal,
		"8.8.8.8": Public, "2001:4860:4860::8888": Public, "255.255.255.254": Public,
	} {
		if got, _ := Classify(netip.MustParseAddr(s)); got != want {
			t.Errorf("Classify(%s) = %d, want %d", s, got, want)
		}
	}
}

// FuzzCheck: whatever URL Check accepts has a port of 1 to 65535 (or
// none), and a literal address host the guard may dial; nothing panics.
func FuzzCheck(f *testing.F) {
	for _, h := range hostile {
		f.Add(h.uri)
	}
	f.Add("https://idp.example/keys")
	f.Add("https://127.0.0.1:8443/keys")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := url.Parse(s)
		if err != nil || Check(u) != nil {
			return
		}
		if p := strings.TrimLeft(u.Port(), "0"); u.Port() != "" && (p == "" || len(p) > 5 || len(p) == 5 && p > "65535") {
			t.Fatalf("%q: port %q accepted", s, u.Port())
		}
		if _, ok := explicitPort(u.Host); ok && u.Port() == "" {
			t.Fatalf("%q: an empty port accepted", s)
		}
		if a, err := netip.ParseAddr(u.Hostname()); err == nil {
			if c, _ := Classify(a); c == Never {
				t.Fatalf("%q: a never-dialled address accepted", s)
			}
		}
	})
}
