package humanize

import (
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1250000: "1,250,000", -1234567: "-1,234,567"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestOneLine: control characters and invalid bytes are shown escaped,
// line breaks become spaces, a final period goes.
func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"a\nb\r\tc.":       "a b c",
		"k (ok\x1b[2J)":    `k (ok\u001b[2J)`,
		"bad \xff byte":    `bad \xff byte`,
		"  spaced   out  ": "spaced out",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPluralWitnessed(t *testing.T) {
	if Plural(1, "entry", "entries") != "1 entry" || Plural(0, "entry", "entries") != "0 entries" {
		t.Error("Plural")
	}
	w := formats.Witnessing{Quorum: "2 of [a b c]", Met: true, Cosigned: []formats.WitnessCosignature{{Name: "a"}, {Name: "b"}},
		Time: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}
	if got := Witnessed(w); got != "witnessed by a, b (quorum 2 of [a b c]) at 2026-11-29T10:00:00Z" {
		t.Errorf("Witnessed: %q", got)
	}
	if got := Witnessed(formats.Witnessing{Quorum: "none"}); got != "no witness required (quorum none)" {
		t.Errorf("Witnessed under quorum none: %q", got)
	}
}

// TestShellQuote: a plain word stays as it is; others are single-quoted.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"/a/b-1": "/a/b-1", "": "''", "a b": "'a b'", "it's": `'it'\''s'`} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
