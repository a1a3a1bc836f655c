package humanize

import "strings"

// OrNone is s as a text result prints an optional field: "none" when s is
// empty or only white space, else s unchanged.
func OrNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "none"
	}
	return s
}
