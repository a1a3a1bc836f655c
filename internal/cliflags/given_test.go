package cliflags

import (
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestGiven: only the flags the command line set, in the order asked.
func TestGiven(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"writ", "verify"}, nil},
		{[]string{"writ", "verify", "--vkey", "k"}, []string{"vkey"}},
		{[]string{"writ", "verify", "--json", "--vkey", "k"}, []string{"vkey", "json"}},
	} {
		var got []string
		if err := runCtx(t, tc.args, func(c *cli.Context) error {
			got = Given(c, "vkey", "json", "absent")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: Given = %q, want %q", tc.args, got, tc.want)
		}
	}
}
