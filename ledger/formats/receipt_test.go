package formats

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
)

// TestReceiptVectorShape: writ reads the COSE working group's example
// receipt (testvectors/testdata/external/cose-receipts) as RFC 9942 says:
// vds 1, one inclusion proof of leaf 3 in a tree of 5 with a 3-hash path.
// Its signature is ES256 by a key writ does not hold, so it is parsed,
// not verified.
func TestReceiptVectorShape(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testvectors", "testdata", "external", "cose-receipts", "inclusion-receipt.cbor"))
	if err != nil {
		t.Fatalf("external receipt vector: %v", err)
	}
	_, p, err := parseReceipt(data)
	if err != nil {
		t.Fatal(err)
	}
	if p.TreeSize != 5 || p.Index != 3 || len(p.Path) != 3 {
		t.Fatalf("parsed %+v", p)
	}
	if _, err := VerifyReceipt(data, []byte("x"), testkit.Key(t, 1).Public()); !errors.Is(err, ErrReceipt) {
		t.Fatalf("an ES256 receipt verified: %v", err)
	}
}
