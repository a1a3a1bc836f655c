package schemas

import (
	"errors"
	"strings"
	"testing"
)

// TestIssuerURLRules: an issuer record naming a URL the fetch guard would
// never fetch for its literal address or port is refused when it is made
// (Encode, which writ signs through) and when it is read (Decode), with a
// FieldError naming the field and the rule; for both URL fields.
func TestIssuerURLRules(t *testing.T) {
	for _, tc := range []struct{ uri, rule string }{
		{"https://169.254.169.254/keys", "address-never"},
		{"https://0.0.0.0/keys", "address-never"},
		{"https://[fe80::1]/keys", "address-never"},
		{"https://224.0.0.1/keys", "address-never"},
		{"https://255.255.255.255/keys", "address-never"},
		{"https://[::ffff:169.254.169.254]/keys", "address-never"},
		{"https://[64:ff9b::a9fe:a9fe]/keys", "address-never"},
		{"https://idp.example:0/keys", "port"},
		{"https://idp.example:/keys", "port"},
		{"https://idp.example:65536/keys", "port"},
	} {
		for _, field := range []string{"jwks_uri", "issuer"} {
			r := &Issuer{V: 1, Issuer: "https://idp.example", JWKSURI: "https://idp.example/keys", Audiences: []string{"writ"}, IssuedAt: 1}
			if field == "jwks_uri" {
				r.JWKSURI = tc.uri
			} else {
				r.Issuer = tc.uri
			}
			_, err := Encode(r)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Kind != KindIssuer || fe.Field != field || !strings.Contains(fe.Rule, tc.rule+":") {
				t.Errorf("%s %s: Encode = %v; want issuer.%s: ... %s:", field, tc.uri, err, field, tc.rule)
			}
			b, err := Marshal(r) // as a hostile writer would, without the rules
			if err != nil {
				t.Fatal(err)
			}
			if rec, err := Decode(KindIssuer, b); rec != nil || !errors.As(err, &fe) || fe.Field != field {
				t.Errorf("%s %s: Decode = %v; want issuer.%s refused", field, tc.uri, err, field)
			}
		}
	}
	for _, ok := range []string{
		"https://idp.example:8443/keys", "https://127.0.0.1:8443/keys", "https://[::1]/keys",
		"https://10.0.0.1/keys", "https://localhost/keys", "https://idp.example:65535/keys",
	} {
		r := &Issuer{V: 1, Issuer: ok, JWKSURI: ok, Audiences: []string{"writ"}, IssuedAt: 1}
		if err := r.Validate(); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
