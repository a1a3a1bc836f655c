package main

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"
)

// TestExplainDirectory: bad input from reading a directory names the
// flag (internal/dirhint tests how); a verdict of no keeps its code.
func TestExplainDirectory(t *testing.T) {
	eisdir := &fs.PathError{Op: "read", Path: "d", Err: syscall.EISDIR}
	args := []string{"writ", "verify", "--key", "d"}
	var ee *exitError
	if got := explainDirectory(args, inputErr(eisdir)); !errors.As(got, &ee) || ee.code != exitUsage || got.Error() != "--key d is a directory; a file is expected here" {
		t.Errorf("bad input: %v, want exit 2 naming --key", got)
	}
	verdict := noErr(eisdir)
	if got := explainDirectory(args, verdict); got != verdict {
		t.Errorf("a verdict: %v, want it unchanged", got)
	}
}
