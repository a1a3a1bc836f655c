package verify

import (
	"errors"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// AppendError is Authority.Append's (and AppendRecords') refusal of a
// record: nothing of the call was appended. Record is the refused
// record's position in the entries given (0-based); Err is the log's
// error, wrapping the *delegation.RecordError that names the rule; Note,
// set by AppendRecords, is the load's Authority.ReplayNote ("" when it
// extended the persisted state): a refusal judged after a full replay
// says so. Its message is Err's.
type AppendError struct {
	Record int
	Err    error
	Note   string
}

func (e *AppendError) Error() string { return e.Err.Error() }

// Unwrap returns Authority.Append's error.
func (e *AppendError) Unwrap() error { return e.Err }

// AppendRecords appends entries (signed records) to the authority log of
// the ledger directory d, all or none: the log is opened with its
// checkpoint key unlocked as unlock says, verified and replayed under the
// key it stores (OpenAuthority), and every record judged by the authority
// in force as if the earlier ones had been appended (Authority.Append).
// It returns the authority, its Log still open so that the caller can
// collect cosignatures for the new checkpoint (the caller closes it), and
// what each record applied, in order. On an error the log is closed.
// Errors: the open's as a *ledgerdir.OpenError (keys.ErrKeyRef,
// sign.ErrToken and kin, unlock's own error, ledger.ErrLocked, ...); a log
// that does not verify as a *LoadError; a refused record as an
// *AppendError; Append's others as they are (ledger.ErrBatchTooLarge,
// ledger.ErrLocked, ...).
func AppendRecords(d ledgerdir.Dir, entries [][]byte, unlock ledgerdir.Unlock) (*Authority, []*delegation.Applied, error) {
	a, err := OpenAuthority(d, Trust{}, &unlock)
	var le *LoadError
	if err != nil && !errors.As(err, &le) {
		return nil, nil, &ledgerdir.OpenError{Err: err}
	} else if err != nil {
		return nil, nil, err
	}
	applied, err := a.Append(entries)
	if err != nil {
		var ae *AppendError
		if errors.As(err, &ae) {
			ae.Note = a.ReplayNote()
		}
		a.Log.Close()
		return nil, nil, err
	}
	return a, applied, nil
}
