package humanize

import "testing"

func TestOrNone(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "none"},
		{" \t\n", "none"},
		{"alice", "alice"},
		{" alice ", " alice "},
	} {
		if got := OrNone(tc.in); got != tc.want {
			t.Errorf("OrNone(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
