package ledgerdir

import (
	"crypto/rand"
	"encoding/hex"
)

// NewOriginPrefix begins every origin NewOrigin makes.
const NewOriginPrefix = "writ/ledger/"

// NewOrigin returns a new ledger's origin when its writer names none:
// NewOriginPrefix and 16 random hex digits (8 bytes from crypto/rand),
// 28 bytes, within MaxLedgerOrigin.
func NewOrigin() string {
	b := make([]byte, 8)
	rand.Read(b)
	return NewOriginPrefix + hex.EncodeToString(b)
}
