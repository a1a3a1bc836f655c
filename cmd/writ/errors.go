package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/internal/progress"
	"github.com/writ-ledger/writ/ledger"
)

// Exit codes, as README.md states them: 0 to 3, and exitBusy for what
// those four do not cover: the input is good but another process holds
// it now (sysexits' EX_TEMPFAIL, as a retry-or-wait signal for scripts).
const (
	exitOK       = 0
	exitNo       = 1
	exitUsage    = 2
	exitInternal = 3
	exitBusy     = 4
)

// exitError carries an exit code, the message for stderr, and hints.
type exitError struct {
	code   int
	err    error
	hints  []string
	silent bool // the result was already printed; print nothing more
	// flag and rule, when set, say which operator's assertion the error
	// refuses (trustRefusal): a verdict of no, naming both.
	flag, rule string
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitError makes e the *exitcode.Error that failure.Report reads
// (exitcode.Carrier).
func (e *exitError) ExitError() *exitcode.Error {
	return &exitcode.Error{Code: e.code, Err: e.err, Hints: e.hints, Silent: e.silent, Flag: e.flag, Rule: e.rule}
}

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// inputErr marks err as bad input (exit 2), with optional hints.
func inputErr(err error, hints ...string) error {
	return &exitError{code: exitUsage, err: err, hints: hints}
}

// noErr marks err as a verdict of no (exit 1), with optional hints.
func noErr(err error, hints ...string) error {
	return &exitError{code: exitNo, err: err, hints: hints}
}

// openErr gives an error from opening a log its exit code: 1 for a
// damaged store (tamper evidence), 4 when another process holds it, 2 for
// anything else (no ledger there, unreadable).
func openErr(err error) error {
	switch {
	case errors.Is(err, ledger.ErrTampered):
		return noErr(err)
	case errors.Is(err, ledger.ErrLocked):
		return &exitError{code: exitBusy, err: err, hints: []string{failure.LockedHint}}
	}
	return inputErr(err)
}

// keyErr marks an error loading or making a private key as bad input
// (exit 2), with a hint for each kind of PKCS#11 token failure
// (failure.TokenHint). The error names the URI without its PIN (package
// sign's errors do).
func keyErr(err error) error {
	if hint := failure.TokenHint(err); hint != "" {
		return inputErr(err, hint)
	}
	return inputErr(err)
}

// report prints err on stderr as failure.Report does (`writ: error:` and
// `writ: hint:` lines, or one JSON object under --json), after clearing
// a progress bar the failure cut short, and returns the exit code.
func report(stderr io.Writer, err error, asJSON bool) int {
	if err == nil {
		return exitOK
	}
	progress.Clear() // a bar cut short by the failure
	return failure.Report(stderr, err, asJSON)
}

// errorJSON is the object a failure prints under --json.
type errorJSON = failure.Failure

// trustRefusal is failure.TrustRefusal.
func trustRefusal(err error) (flag, rule string, ok bool) { return failure.TrustRefusal(err) }
