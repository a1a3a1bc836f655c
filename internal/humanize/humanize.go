// Package humanize writes values for people to read on a terminal or a
// page: one escaped line of text, counts with their noun, numbers with
// thousands separators, a met witness quorum. It is shared by the
// command line and the audit renderers (internal/auditview) so that both
// print the same thing the same way; it checks nothing.
package humanize

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/writ-ledger/writ/ledger/formats"
)

// OneLine keeps s on one line, without a final period, and escapes bytes
// that are not printable UTF-8: an invalid byte as \xNN, a non-printing
// rune as \uNNNN; tabs, line feeds and carriage returns become spaces and
// runs of spaces one. Text from a ledger or a corrupt file (a
// revocation's reason, a key's name) goes through it before it reaches a
// terminal, so that it cannot clear the screen or forge a line.
func OneLine(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", s[0])
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
		s = s[size:]
	}
	return strings.TrimSuffix(strings.Join(strings.Fields(b.String()), " "), ".")
}

// Plural returns n with its noun: "1 entry", or "n entries" (many) for
// any other n.
func Plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Thousands writes n in decimal with comma thousands separators:
// 1,250,000, -1,234.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// Witnessed describes a witness quorum a checkpoint met: who cosigned it,
// under which quorum, and when (RFC 3339, UTC) when w has a time; "no
// witness required (quorum none)" under quorum none.
func Witnessed(w formats.Witnessing) string {
	var names []string
	for _, c := range w.Cosigned {
		names = append(names, c.Name)
	}
	if w.Quorum == "none" {
		return "no witness required (quorum none)"
	}
	s := fmt.Sprintf("witnessed by %s (quorum %s)", strings.Join(names, ", "), w.Quorum)
	if !w.Time.IsZero() {
		s += fmt.Sprintf(" at %s", w.Time.UTC().Format(time.RFC3339))
	}
	return s
}

// ShellQuote returns s as a POSIX shell word: as it is when it holds only
// letters, digits and -_./+=:@, (and is not empty), else in single
// quotes, a single quote inside written as quote, backslash, quote, quote.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+=:@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
