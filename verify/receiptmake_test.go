package verify_test

import (
	"crypto/rand"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/verify"
)

// TestReceiptAndCheck: Receipt writes a receipt without a policy, and
// refuses one under a policy no witness cosigned (an *UnwitnessedError
// wrapping formats.ErrQuorum); CheckReceipt proves it for its entry,
// refuses other bytes as a *ReceiptProofError (explained with the
// ledger's directory: a *ReceiptEntryError naming both digests), and a
// receipt without a checkpoint under a policy as unwitnessed.
func TestReceiptAndCheck(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	rootKey := testkit.Key(t, 1)
	r := testkit.Root(1, rootKey)
	r.IssuedAt, r.Expires = time.Now().Add(-time.Hour).Unix(), time.Now().Add(time.Hour).Unix()
	d := ledgerdir.Dir(filepath.Join(t.TempDir(), "ledger"))
	root := testkit.Seal(t, r, rootKey)
	a, err := verify.InitAuthority(d, "example.com/receipt", ledgerdir.NewKey{Recipients: []age.Recipient{id.Recipient()}, Rand: rand.Reader}, root)
	if err != nil {
		t.Fatal(err)
	}
	k := a.Log.Key()
	wvkey, err := formats.CosignerKey("witness.example/w", testkit.Key(t, 10).Public())
	if err != nil {
		t.Fatal(err)
	}
	policy, err := formats.ParsePolicy([]byte("log " + k.String() + "\nwitness w " + wvkey + "\nquorum w\n"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()

	receipt, err := verify.Receipt(a.Log, 0, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	var ue *verify.UnwitnessedError
	if _, err := verify.Receipt(a.Log, 0, policy, now); !errors.As(err, &ue) || !errors.Is(err, formats.ErrQuorum) {
		t.Fatalf("Receipt under an unmet policy: %v, want an *UnwitnessedError wrapping ErrQuorum", err)
	}
	if _, err := verify.Receipt(a.Log, 1, nil, now); !errors.Is(err, formats.ErrProof) {
		t.Fatalf("Receipt of an entry the log does not hold: %v, want formats.ErrProof", err)
	}
	a.Log.Close() // ExplainReceipt opens the directory's log

	var pe *verify.ReceiptProofError
	var re *verify.ReceiptEntryError
	var fue *formats.UnwitnessedReceiptError
	for _, tc := range []struct {
		name   string
		entry  []byte
		dir    ledgerdir.Dir
		policy *formats.Policy
		check  func(error) bool
	}{
		{"valid", root, "", nil, func(err error) bool { return err == nil }},
		{"valid, the directory's key", root, d, nil, func(err error) bool { return err == nil }},
		{"other bytes, the caller's key", []byte("other"), "", nil, func(err error) bool {
			return errors.As(err, &pe) && !errors.As(err, &re) && errors.Is(err, formats.ErrReceipt)
		}},
		{"other bytes, explained", []byte("other"), d, nil, func(err error) bool {
			return errors.As(err, &pe) && errors.As(err, &re) && re.Index == 0 && re.Stored != "" && re.Stored != re.Given
		}},
		{"unwitnessed", root, "", policy, func(err error) bool {
			return errors.As(err, &fue) && !fue.Carried && !errors.As(err, &pe)
		}},
		{"no ledger", root, ledgerdir.Dir(filepath.Join(t.TempDir(), "none")), nil, func(err error) bool {
			var oe *ledgerdir.OpenError
			return errors.As(err, &oe) && !errors.As(err, &pe)
		}},
	} {
		key := k // the caller's key, or none: the directory's own
		if tc.dir != "" {
			key = nil
		}
		got, err := verify.CheckReceipt(receipt, tc.entry, key, tc.dir, tc.policy, now)
		if !tc.check(err) {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err == nil && (got.Index != 0 || got.TreeSize != 1 || !got.Valid || got.PositionSigned) {
			t.Fatalf("%s: %+v", tc.name, got)
		}
	}
}
