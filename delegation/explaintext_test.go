package delegation

import (
	"slices"
	"testing"
)

func TestExplanationLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    Explanation
		want []string
	}{
		{"denied", Explanation{Rule: "authority-missing", Reason: "no delegation"}, []string{"no: authority-missing", "reason: no delegation"}},
		{"allowed", Explanation{Allowed: true, Chain: []ChainLink{
			{Index: 3, Digest: "sha256:aa", Key: "k1", IssuedBy: "key k0"},
			{Index: 1, Digest: "sha256:bb", Key: "k0", IssuedBy: "the root threshold"},
		}}, []string{"yes",
			"  1. delegation at index 3 (sha256:aa) to key k1, issued by key k0",
			"  2. delegation at index 1 (sha256:bb) to key k0, issued by the root threshold"}},
	} {
		if got := tc.e.Lines(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
