package audit

import (
	"slices"
	"testing"
)

func TestVerifiedLines(t *testing.T) {
	v := &Verified{OK: true, Logs: []LogSummary{
		{Log: "authority", Origin: "o", Size: 1, RootHash: "aa"},
		{Log: "decisions", Origin: "d", Size: 1200, RootHash: "bb"},
	}}
	want := []string{"ok: authority log o: 1 entry, root aa", "ok: decisions log d: 1200 entries, root bb"}
	if got := v.Lines(); !slices.Equal(got, want) {
		t.Errorf("Lines() = %q, want %q", got, want)
	}
}
