package sign_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/sign"
)

func TestParseTokenURIAccepts(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  sign.TokenURI
		canon string
	}{
		{"pkcs11:token=writ;object=root-1", sign.TokenURI{Token: "writ", Object: "root-1"}, "pkcs11:token=writ;object=root-1"},
		{"pkcs11:object=root-1;token=writ", sign.TokenURI{Token: "writ", Object: "root-1"}, "pkcs11:token=writ;object=root-1"},
		{"pkcs11:token=writ;id=%01%a2", sign.TokenURI{Token: "writ", ID: []byte{1, 0xa2}}, "pkcs11:token=writ;id=%01%A2"},
		{"pkcs11:token=My%20HSM;object=a&b=c:d;id=x",
			sign.TokenURI{Token: "My HSM", Object: "a&b=c:d", ID: []byte("x")}, "pkcs11:token=My%20HSM;object=a%26b%3Dc%3Ad;id=x"},
		{"pkcs11:token=t;object=o?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/etc/writ/pin",
			sign.TokenURI{Token: "t", Object: "o", ModulePath: "/usr/lib/softhsm/libsofthsm2.so", PINSource: "/etc/writ/pin"},
			"pkcs11:token=t;object=o?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=/etc/writ/pin"},
		{"pkcs11:token=t;object=o?pin-source=file:///run/pin", sign.TokenURI{Token: "t", Object: "o", PINSource: "/run/pin"}, "pkcs11:token=t;object=o?pin-source=/run/pin"},
		{"pkcs11:token=t;object=o?pin-source=/run/a%20pin", sign.TokenURI{Token: "t", Object: "o", PINSource: "/run/a pin"}, "pkcs11:token=t;object=o?pin-source=/run/a%20pin"},
		{"pkcs11:token=" + strings.Repeat("x", 32) + ";object=o", sign.TokenURI{Token: strings.Repeat("x", 32), Object: "o"}, ""},
	} {
		u, err := sign.ParseTokenURI(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if u.Token != tc.want.Token || u.Object != tc.want.Object || !bytes.Equal(u.ID, tc.want.ID) ||
			u.ModulePath != tc.want.ModulePath || u.PINSource != tc.want.PINSource {
			t.Errorf("%s: parsed %+v, want %+v", tc.in, *u, tc.want)
		}
		if tc.canon != "" && u.String() != tc.canon {
			t.Errorf("%s: String() = %s, want %s", tc.in, u.String(), tc.canon)
		}
		if !sign.IsTokenURI(tc.in) {
			t.Errorf("IsTokenURI(%s) = false", tc.in)
		}
	}
	// A scheme is case-insensitive (RFC 3986 §3.1): "PKCS11:" is a URI,
	// never taken for a key file path.
	if sign.IsTokenURI("root.key") || !sign.IsTokenURI("PKCS11:token=t;object=o") {
		t.Error("IsTokenURI accepts a file name, or refuses an upper-case scheme")
	}
}

func TestParseTokenURIRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"pkcs11:token=t;object=o;pin-value=123456", "pin-value is refused: a PIN never goes in a URI or a flag"},
		{"pkcs11:token=t;object=o?pin-value=123456", "pin-value is refused"},
		{"pkcs11:token=t;object=o?PIN-Value=123456", "pin-value is refused"},
		{"pkcs11:token=t;type=private;object=a/b?pin-value=123456#x", "pin-value is refused"},
		{"pkcs11:token=t;object=o;type=private", `attribute "type" is not one writ takes`},
		{"pkcs11:token=t;object=o;123456", "path attribute 3 is not NAME=VALUE"},
		{"pkcs11:token=t;object=o;object=p", "attribute object given twice"},
		{"pkcs11:token=t;object=o?pin-source=/a&pin-source=/b", "attribute pin-source given twice"},
		{"pkcs11:object=o", "no token attribute"},
		{"pkcs11:token=t", "no object or id attribute"},
		{"pkcs11:token=t;object=", "object is empty"},
		{"pkcs11:token=t;;object=o", "path attribute 2 is not NAME=VALUE"},
		{"pkcs11:token=t;object=o?", "'?' with no query attribute"},
		{"pkcs11:token=t;object=o#f", "fragment"},
		{"pkcs11:token=t;module-path=/x.so;object=o", "module-path is a query attribute"},
		{"pkcs11:token=t?object=o", "object is a path attribute"},
		{"pkcs11:token=t;object=a/b", `character '/' must be percent-encoded`},
		{"pkcs11:token=t;object=a b", `character ' ' must be percent-encoded`},
		{"pkcs11:token=t;object=%4", "'%' not followed by two hex digits"},
		{"pkcs11:token=t;object=%zz", "'%' not followed by two hex digits"},
		{"pkcs11:token=t;object=%0a", "not printable UTF-8"},
		{"pkcs11:token=t;object=%ff", "not printable UTF-8"},
		{"pkcs11:token=" + strings.Repeat("x", 33) + ";object=o", "token: longer than 32 bytes"},
		{"pkcs11:token=t;object=" + strings.Repeat("x", 256), "object: longer than 255 bytes"},
		{"pkcs11:token=t;id=" + strings.Repeat("%00", 256), "id: longer than 255 bytes"},
		{"pkcs11:token=t;object=o?module-path=libsofthsm2.so", "must be an absolute path"},
		{"pkcs11:token=t;object=o?pin-source=pin.txt", "must be a file: an absolute path or file:/abs/path"},
		{"pkcs11:token=t;object=o?pin-source=|/bin/echo", "writ runs no command for a PIN"},
		{"pkcs11:token=t;object=o?pin-source=file://host/pin", "a file URI with a host is refused"},
		{"pkcs11:token=t;object=" + strings.Repeat("x", sign.MaxTokenURI), "longer than 4096 bytes"},
		{"root.key", `does not start with "pkcs11:"`},
	} {
		_, err := sign.ParseTokenURI(tc.in)
		if err == nil {
			t.Errorf("%.60s: accepted", tc.in)
			continue
		}
		if !errors.Is(err, sign.ErrTokenURI) || !errors.Is(err, sign.ErrToken) {
			t.Errorf("%.60s: %v does not wrap ErrTokenURI and ErrToken", tc.in, err)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60s: error %q, want it to contain %q", tc.in, err, tc.want)
		}
		if strings.Contains(err.Error(), "123456") {
			t.Errorf("%.60s: error %q repeats a PIN", tc.in, err)
		}
	}
}

// FuzzParseTokenURI: the parser never panics; what it accepts is within
// its bounds and prints (String) a URI that parses to the same thing;
// what it refuses is never repeated in the error.
func FuzzParseTokenURI(f *testing.F) {
	for _, s := range []string{
		"pkcs11:token=writ;object=root-1",
		"pkcs11:token=My%20HSM;object=a&b=c:d;id=%01%02",
		"pkcs11:token=t;object=o?module-path=/usr/lib/x.so&pin-source=file:/etc/pin",
		"pkcs11:token=t;object=o?pin-value=123456",
		"pkcs11:token=t;id=%00?pin-source=file:///a%3Fb",
		"pkcs11:;=?&",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := sign.ParseTokenURI(s)
		if err != nil {
			if !errors.Is(err, sign.ErrTokenURI) {
				t.Fatalf("error %v does not wrap ErrTokenURI", err)
			}
			if strings.Contains(strings.ToLower(s), ";pin-value=") && strings.HasPrefix(s, "pkcs11:") && len(s) <= sign.MaxTokenURI && !strings.Contains(err.Error(), "pin-value is refused") {
				t.Fatalf("a URI with pin-value refused for another reason first: %v", err)
			}
			// The text after the first '=' (values, and names after them)
			// is never repeated, unless it is also a name before it.
			if first, rest, ok := strings.Cut(s, "="); ok && len(rest) >= 8 && strings.Contains(err.Error(), rest) && !strings.Contains(first, rest) {
				t.Fatalf("error %q repeats the URI's values", err)
			}
			return
		}
		if u.Token == "" || len(u.Token) > sign.MaxTokenLabel || (u.Object == "" && len(u.ID) == 0) ||
			len(u.Object) > sign.MaxObjectLabel || len(u.ID) > sign.MaxObjectID {
			t.Fatalf("accepted %+v", *u)
		}
		again, err := sign.ParseTokenURI(u.String())
		if err != nil {
			t.Fatalf("String() %s does not parse: %v", u.String(), err)
		}
		if again.Token != u.Token || again.Object != u.Object || !bytes.Equal(again.ID, u.ID) ||
			again.ModulePath != u.ModulePath || again.PINSource != u.PINSource || again.String() != u.String() {
			t.Fatalf("%+v printed as %s reparsed as %+v", *u, u.String(), *again)
		}
	})
}
