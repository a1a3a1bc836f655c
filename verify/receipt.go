package verify

import (
	"bytes"
	"fmt"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/schemas"
)

// ReceiptEntryError is a receipt that does not verify for the entry
// given, where the ledger at hand shows why: its authority log holds no
// entry at the index the receipt states (Stored ""), or other bytes there.
type ReceiptEntryError struct {
	Index, TreeSize int64  // the entry and tree size the receipt states (not signed)
	LogSize         int64  // the entries the authority log holds
	Stored          string // sha256:<hex> of the log's entry at Index, "" when it holds none
	Given           string // sha256:<hex> of the entry given
	Err             error  // the receipt's error (wrapping formats.ErrReceipt)
}

func (e *ReceiptEntryError) Error() string {
	if e.Stored == "" {
		return fmt.Sprintf("%v (the receipt says it is for entry %d of a tree of %d entries; this log holds %d)", e.Err, e.Index, e.TreeSize, e.LogSize)
	}
	return fmt.Sprintf("the entry given (%s) is not entry %d of the log (%s), which the receipt is for: %v", e.Given, e.Index, e.Stored, e.Err)
}

// Unwrap returns the receipt's error.
func (e *ReceiptEntryError) Unwrap() error { return e.Err }

// ExplainReceipt returns err, the error of a receipt that did not verify
// for entry (the exact bytes given), as a *ReceiptEntryError when the
// authority log of dir shows that the entry is not the one the receipt
// states it is for; else err itself (the receipt does not parse, the log
// does not open, or it holds the same bytes there: the receipt is not
// this log's).
func ExplainReceipt(dir ledgerdir.Dir, receipt, entry []byte, err error) error {
	index, size, perr := formats.ReceiptPosition(receipt)
	if perr != nil {
		return err
	}
	log, oerr := dir.OpenLog(ledgerdir.AuthorityLog)
	if oerr != nil {
		return err
	}
	defer log.Close()
	e := &ReceiptEntryError{Index: index, TreeSize: size, LogSize: log.Size(), Given: schemas.SHA256Digest(entry), Err: err}
	if index < 0 || index >= log.Size() {
		return e
	}
	stored, lerr := log.Entry(index)
	if lerr != nil || bytes.Equal(stored, entry) {
		return err
	}
	e.Stored = schemas.SHA256Digest(stored)
	return e
}
