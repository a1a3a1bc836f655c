package ledger

import "github.com/writ-ledger/writ/ledger/internal/merkle"

// newHashCursor reads txn's stored tree hashes in increasing index order
// (merkle.Cursor); close its iterator (It) after.
func newHashCursor(txn Txn) *merkle.Cursor {
	return &merkle.Cursor{It: txn.Iterate([]byte{prefixHash}), Missing: ErrNoKey,
		Key: func(k []byte, i int64) []byte {
			if len(k) != 9 {
				k = make([]byte, 9)
			}
			return indexKeyInto(k, prefixHash, i)
		}}
}
