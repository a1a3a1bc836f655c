// Package exitcode is the small error vocabulary of writ's command line
// (cmd/writ) and its plumbing (internal/fileio, internal/dirhint,
// internal/cliflags, internal/secrets): an error that carries the exit
// code the command line gives it, and the hints printed after it; Of
// finds it in an error's chain. It imports nothing of writ.
//
// The codes are README.md's: 0 success, 1 a verdict of no, 2 bad usage
// or input, 3 internal error, 4 busy (another process holds the input).
package exitcode

import (
	"errors"
	"fmt"
)

// The exit codes of writ's command line.
const (
	OK       = 0
	No       = 1
	Usage    = 2
	Internal = 3
	Busy     = 4
)

// Error is an error with the exit code the command line gives it and
// hints: the next acts, printed as `writ: hint:` lines after the error.
// Error unwraps to Err, which it prints as.
type Error struct {
	Code  int
	Err   error
	Hints []string
	// Silent: the command already printed its result (a verdict, a
	// denial); nothing more is printed for the error.
	Silent bool
	// Evidence are lines of evidence (signed checkpoints, as text) to
	// keep, printed as `writ: evidence:` lines after the hints, and under
	// --json as the failure's evidence_lines.
	Evidence []string
	// Flag and Rule, when Flag is set, name the operator's assertion the
	// error refuses (the flag that gave it, such as "--fleet FILE") and
	// the rule id it is refused under: a verdict of no naming both.
	Flag, Rule string
}

// Error returns Err's message.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Usagef is bad usage (exit 2), its message formatted as fmt.Errorf
// formats it (%w wraps).
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// Input marks err as bad input (exit 2), with optional hints.
func Input(err error, hints ...string) error {
	return &Error{Code: Usage, Err: err, Hints: hints}
}

// Refused marks err as a verdict of no (exit 1), with optional hints.
func Refused(err error, hints ...string) error {
	return &Error{Code: No, Err: err, Hints: hints}
}

// Of returns the first *Error in err's chain, nil if there is none.
func Of(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
