package main

import (
	"bytes"
	"errors"
	"flag"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestProgressClearedForDiagnostics: a diagnostic or an error never runs
// into a bar's line: the bar is cleared first, and work that starts again
// (a sync retried under --watch) gets a new bar. Under --json no bar is
// drawn at all.
func TestProgressClearedForDiagnostics(t *testing.T) {
	t.Setenv("WRIT_PROGRESS", "1")
	var out bytes.Buffer
	c := cli.NewContext(&cli.App{ErrWriter: &out}, nil, nil)
	p := progressFor(c, "syncing", "entries")
	p(0, 100)
	p(50, 100)
	diag(c, levelWarning, "sync: the source failed; next try in 2s")
	p(0, 100) // the retry
	report(&out, errors.New("gave up"), false)
	got := out.String()
	if !regexp.MustCompile(`\r {20,}\rwrit: warning: sync: the source failed; next try in 2s\n`).MatchString(got) {
		t.Errorf("the warning is not on a line of its own: %q", got)
	}
	if i := strings.Index(got, "next try in 2s\n"); i < 0 || !strings.Contains(got[i:], "syncing   0% |") {
		t.Errorf("the retry drew no new bar: %q", got)
	}
	if !regexp.MustCompile(`\r {20,}\rwrit: error: internal error: gave up\n$`).MatchString(got) {
		t.Errorf("the error is not on a line of its own: %q", got)
	}

	set := flag.NewFlagSet("writ", flag.ContinueOnError)
	set.Bool("json", true, "")
	if p := progressFor(cli.NewContext(&cli.App{ErrWriter: &out}, set, nil), "syncing", "entries"); p != nil {
		t.Error("a bar under --json")
	}
}
