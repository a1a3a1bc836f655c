package formats

import "testing"

// TestCountSigLines: only well-formed signature lines after the first
// blank line count.
func TestCountSigLines(t *testing.T) {
	sig := "\u2014 log.example AAAAAAAA\n"
	for _, tc := range []struct {
		note string
		want int
	}{
		{"", 0},
		{"o\n1\nh\n", 0},
		{"o\n1\nh\n\n" + sig, 1},
		{"o\n1\nh\n\n" + sig + "\u2014 w1 AAAAAAAA\n" + sig, 3},
		{"o\n1\nh\n\n" + sig + "\u2014 bad\n-- x AAAAAAAA\n", 1},
		{sig + "\n\n", 0},
	} {
		if got := CountSigLines([]byte(tc.note)); got != tc.want {
			t.Errorf("%q: %d, want %d", tc.note, got, tc.want)
		}
	}
}
