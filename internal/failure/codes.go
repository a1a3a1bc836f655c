package failure

import (
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
)

// Open gives an error from opening a log its exit code: 1 for a damaged
// store (ledger.ErrTampered: tamper evidence), 4 when another process
// holds it (ledger.ErrLocked, with LockedHint), 2 for anything else (no
// ledger there, unreadable).
func Open(err error) error {
	switch {
	case errors.Is(err, ledger.ErrTampered):
		return exitcode.Refused(err)
	case errors.Is(err, ledger.ErrLocked):
		return &exitcode.Error{Code: exitcode.Busy, Err: err, Hints: []string{LockedHint}}
	}
	return exitcode.Input(err)
}

// OpenLog gives an error from opening a log of the ledger directory dir
// its exit code, whichever way a command opened it (ledgerdir.Dir.OpenLog,
// ledgerdir.Dir.OpenAuthorityKeyed, verify.OpenAuthority): a ledger
// without a decision log yet (ledgerdir.ErrNoDecisionLog) is bad usage;
// an error that already carries a code (a passphrase not given) keeps it;
// a token's failure is as Key says; a log that opened but did not verify
// (*verify.LoadError) is a no; others are Open's (a deleted decision log,
// an *ledger.IntegrityError, is a no).
func OpenLog(err error, dir string) error {
	var le *verify.LoadError
	switch {
	case errors.Is(err, ledgerdir.ErrNoDecisionLog):
		return exitcode.Usagef("%s has no decision log yet (it is created by the first `writ admit`)", dir)
	case exitcode.Of(err) != nil:
		return err
	case errors.Is(err, sign.ErrToken) || errors.Is(err, sign.ErrTokenURI):
		return Key(err)
	case errors.As(err, &le):
		return exitcode.Refused(le.Err)
	}
	return Open(err)
}

// Key marks an error loading or making a private key as bad input (exit
// 2), with a hint for each kind of PKCS#11 token failure (TokenHint).
// The error names the URI without its PIN (package sign's errors do).
func Key(err error) error {
	if hint := TokenHint(err); hint != "" {
		return exitcode.Input(err, hint)
	}
	return exitcode.Input(err)
}

// Record gives a refused record its exit code: 2 when it is malformed
// (delegation.RuleMalformed: bad input), 1 when it is well-formed but
// fails a signature or authority check (a verdict of no), with the next
// act its refusal calls for (delegation.RecordError.NextAct, from package
// rules). An error without a *delegation.RecordError is a no.
func Record(err error) error {
	var re *delegation.RecordError
	if !errors.As(err, &re) {
		return exitcode.Refused(err)
	}
	var hints []string
	if h := re.NextAct(); h != "" {
		hints = append(hints, h)
	}
	if re.Rule == delegation.RuleMalformed {
		return exitcode.Input(err, hints...)
	}
	return exitcode.Refused(err, hints...)
}

// Appended says, on err (an *exitcode.Error from collecting the
// cosignatures of a checkpoint after an append), that the records at
// entries first to last stay appended, so that no one appends them
// again (they would be refused as duplicates). Any other err is
// returned as it is.
func Appended(err error, first, last int64) error {
	var xe *exitcode.Error
	if !errors.As(err, &xe) {
		return err
	}
	what := fmt.Sprintf("appended as entry %d", first)
	if last > first {
		what = fmt.Sprintf("appended as entries %d to %d", first, last)
	}
	xe.Err = fmt.Errorf("%s, but %w", what, xe.Err)
	xe.Hints = append(xe.Hints, "do not append the records again: they are in the log; only the cosignatures are missing")
	return err
}

// Append gives an error of verify.AppendRecords (appending the files
// names to the ledger directory dir) its exit code and next acts: the
// open's as OpenLog says; a ledger that does not verify is a no; a
// refused record is Record's, naming its file; a batch too large, or a
// log on a distributed engine, is bad input; a lock is busy; anything
// else a no. It returns first the note a
// refusal judged after a full replay carries ("" for none).
func Append(err error, dir string, names []string) (note string, coded error) {
	var oe *ledgerdir.OpenError
	var le *verify.LoadError
	var ae *verify.AppendError
	switch {
	case errors.As(err, &oe):
		return "", OpenLog(oe.Err, dir)
	case errors.Is(err, ledger.ErrOnEngine):
		return "", exitcode.Input(fmt.Errorf("nothing appended: %w", err), "submit the records to a writer of the engine: `writ ledger append --to URL --vkey KEY`",
			"or, to go on without the engine, take the log back first: `writ ledger migrate --back --dir "+dir+"`")
	case errors.As(err, &le):
		return "", exitcode.Refused(fmt.Errorf("the ledger does not verify, nothing appended: %w", le.Err), "run `writ ledger verify --dir "+dir+"` for the evidence")
	case errors.As(err, &ae):
		name := fmt.Sprintf("record %d", ae.Record+1)
		if ae.Record >= 0 && ae.Record < len(names) {
			name = names[ae.Record]
		}
		return ae.Note, Record(fmt.Errorf("nothing appended: %s: %w", name, ae.Err))
	case errors.Is(err, ledger.ErrBatchTooLarge):
		return "", exitcode.Input(fmt.Errorf("nothing appended: %w", err), "append the records in smaller batches")
	case errors.Is(err, ledger.ErrLocked):
		return "", Open(err)
	}
	return "", exitcode.Refused(fmt.Errorf("nothing appended: %w", err))
}
