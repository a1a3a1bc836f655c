package formats

import "strings"

// CountSigLines counts the signature lines of the signed note note (the
// log's and its witnesses', c2sp.org/signed-note) without verifying
// them: the lines after the note's first blank line that ParseSigLine
// accepts. A note without a blank line has none.
func CountSigLines(note []byte) int {
	_, sigs, ok := strings.Cut(string(note), "\n\n")
	if !ok {
		return 0
	}
	n := 0
	for _, line := range strings.Split(sigs, "\n") {
		if _, err := ParseSigLine(line); err == nil {
			n++
		}
	}
	return n
}
