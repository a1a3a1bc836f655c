package main

import (
	"io"

	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/internal/progress"
)

// A command's error carries its exit code and hints as an
// *exitcode.Error (exitcode.Usagef, Input, Refused; failure.Open, OpenLog,
// Key, Record); failure.Classify gives one that carries none its code.
// The codes are README.md's: 0 to 3, and exitcode.Busy (4) for what those
// four do not cover: the input is good but another process holds it now
// (sysexits' EX_TEMPFAIL, as a retry-or-wait signal for scripts).

// report prints err on stderr as failure.Report does (`writ: error:` and
// `writ: hint:` lines, or one JSON object under --json), after clearing
// a progress bar the failure cut short, and returns the exit code.
func report(stderr io.Writer, err error, asJSON bool) int {
	if err == nil {
		return 0
	}
	progress.Clear() // a bar cut short by the failure
	return failure.Report(stderr, err, asJSON)
}
