package ledgerdir

// OpenError is the error of opening a ledger directory's logs, returned
// by a caller that goes on to do more with them (replica.ExportDir), so
// that its caller can tell a ledger that did not open (no ledger there,
// one held by another process, a damaged store) from what failed after.
// Its message is Err's.
type OpenError struct{ Err error }

func (e *OpenError) Error() string { return e.Err.Error() }

// Unwrap returns the open's error.
func (e *OpenError) Unwrap() error { return e.Err }
