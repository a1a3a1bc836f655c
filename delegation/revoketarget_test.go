package delegation

import (
	"testing"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// TestMaxRevocationTarget: both things a target file can be fit the bound.
func TestMaxRevocationTarget(t *testing.T) {
	if MaxRevocationTarget < sign.MaxPublicKeyFile || MaxRevocationTarget < schemas.MaxRecordSize {
		t.Fatalf("MaxRevocationTarget %d: below a public key file (%d) or a record (%d)", MaxRevocationTarget, sign.MaxPublicKeyFile, schemas.MaxRecordSize)
	}
}
