package cliflags

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/schemas"
)

func TestCommaList(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
	}{
		{nil, nil},
		{[]string{"instruct"}, []string{"instruct"}},
		{[]string{"instruct, pin", "revoke"}, []string{"instruct", "pin", "revoke"}},
		{[]string{"instruct,,pin"}, []string{"instruct", "", "pin"}},
		{[]string{" a b ,c"}, []string{"a b", "c"}},
	} {
		if got := CommaList(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("CommaList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFieldFlag(t *testing.T) {
	cmd := &cli.Command{Name: "delegate", Flags: []cli.Flag{
		&cli.StringFlag{Name: "to"}, &cli.StringSliceFlag{Name: "machine"}, &cli.StringFlag{Name: "not-after"}, &cli.StringFlag{Name: "jwks-uri", Aliases: []string{"j"}},
	}}
	fe := func(kind schemas.Kind, field string) error {
		return &schemas.FieldError{Kind: kind, Field: field, Rule: "bad"}
	}
	other := errors.New("other")
	for _, tc := range []struct {
		name string
		cmd  *cli.Command
		err  error
		want string
	}{
		{"the named flag", cmd, fe("delegation", "key"), "--to: delegation.key: bad"},
		{"a plural field", cmd, fe("delegation", "machines.0"), "--machine: delegation.machines.0: bad"},
		{"underscores", cmd, fe("delegation", "not_after"), "--not-after: delegation.not_after: bad"},
		{"wrapped", cmd, fmt.Errorf("record: %w", fe("issuer", "jwks_uri")), "--jwks-uri: record: issuer.jwks_uri: bad"},
		{"no such flag", cmd, fe("delegation", "depth"), "delegation.depth: bad"},
		{"no command", nil, fe("delegation", "key"), "delegation.key: bad"},
		{"no field error", cmd, other, "other"},
	} {
		got := FieldFlag(tc.cmd, tc.err)
		if got.Error() != tc.want || !errors.Is(got, tc.err) {
			t.Errorf("%s: %q, want %q wrapping the error", tc.name, got, tc.want)
		}
	}
	if !HasFlag(cmd, "j") || HasFlag(cmd, "key") {
		t.Errorf("HasFlag: an alias is a name, --key is not a flag of cmd")
	}
}

func TestOne(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   string
		err    string
	}{
		{nil, "", ""},
		{[]string{"a.key"}, "a.key", ""},
		{[]string{"a.key", "b.key"}, "", "--key given 2 times: a pin carries one signature; give one --key"},
	} {
		got, err := One(tc.values, "key", "a pin carries one signature")
		var ee *exitcode.Error
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%q: %q %v, want %q", tc.values, got, err, tc.want)
		case tc.err != "" && (!errors.As(err, &ee) || ee.Code != exitcode.Usage || err.Error() != tc.err):
			t.Errorf("%q: %v, want exit 2 %q", tc.values, err, tc.err)
		}
	}
}
