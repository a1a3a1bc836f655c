package main

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"

	"github.com/writ-ledger/writ/internal/exitcode"
)

// TestExplainDirectory: bad input from reading a directory names the
// flag (internal/dirhint tests how); a verdict of no keeps its code.
func TestExplainDirectory(t *testing.T) {
	eisdir := &fs.PathError{Op: "read", Path: "d", Err: syscall.EISDIR}
	args := []string{"writ", "verify", "--key", "d"}
	var ee *exitcode.Error
	if got := explainDirectory(args, exitcode.Input(eisdir)); !errors.As(got, &ee) || ee.Code != exitcode.Usage || got.Error() != "--key d is a directory; a file is expected here" {
		t.Errorf("bad input: %v, want exit 2 naming --key", got)
	}
	verdict := exitcode.Refused(eisdir)
	if got := explainDirectory(args, verdict); got != verdict {
		t.Errorf("a verdict: %v, want it unchanged", got)
	}
}
