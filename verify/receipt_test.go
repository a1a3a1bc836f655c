package verify_test

import (
	"crypto/rand"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/verify"
)

// TestExplainReceipt: a receipt that failed for other bytes than the
// log's entry at its index is a *verify.ReceiptEntryError naming both
// digests; for the same bytes, or a receipt that does not parse, the
// error stays as it was.
func TestExplainReceipt(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	rootKey := testkit.Key(t, 1)
	r := testkit.Root(1, rootKey)
	r.IssuedAt, r.Expires = time.Now().Add(-time.Hour).Unix(), time.Now().Add(time.Hour).Unix()
	d := ledgerdir.Dir(filepath.Join(t.TempDir(), "ledger"))
	root := testkit.Seal(t, r, rootKey)
	a, err := verify.InitAuthority(d, "example.com/explain", ledgerdir.NewKey{Recipients: []age.Recipient{id.Recipient()}, Rand: rand.Reader}, root)
	if err != nil {
		t.Fatal(err)
	}
	receipt, err := a.Log.Receipt(0)
	a.Log.Close()
	if err != nil {
		t.Fatal(err)
	}
	failed := errors.New("does not verify")
	var re *verify.ReceiptEntryError
	if err := verify.ExplainReceipt(d, receipt, []byte("other"), failed); !errors.As(err, &re) || re.Index != 0 || re.Stored == "" || re.Stored == re.Given || !errors.Is(err, failed) {
		t.Fatalf("other bytes: %v", err)
	}
	if err := verify.ExplainReceipt(d, receipt, root, failed); err != failed {
		t.Fatalf("the same bytes: %v", err)
	}
	if err := verify.ExplainReceipt(d, []byte("junk"), root, failed); err != failed {
		t.Fatalf("no receipt: %v", err)
	}
}
