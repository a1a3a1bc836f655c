// Package exitcode is the small error vocabulary writ's command-line
// plumbing (internal/fileio, internal/dirhint, internal/cliflags,
// internal/secrets) returns: an error that carries the exit code the
// command line gives it, and the hints printed after it; Of finds it in
// an error's chain, or a caller's own Carrier. It imports nothing of
// writ.
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

// Carrier is an error of a caller's own type that carries an exit code:
// ExitError returns it as an *Error (a new one each call, or the same).
type Carrier interface {
	error
	ExitError() *Error
}

// Of returns the exit error err carries: the first Carrier in err's
// chain (its ExitError), else the first *Error; nil if it carries
// neither.
func Of(err error) *Error {
	var c Carrier
	if errors.As(err, &c) {
		return c.ExitError()
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
