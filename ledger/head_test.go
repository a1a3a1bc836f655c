package ledger_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"golang.org/x/mod/sumdb/tlog"
)

// TestVerifiedEntry: an entry read through VerifiedEntry is proven against
// the signed root; changing its bytes (with or without its leaf hash), or
// smuggling one past the checkpoint, is an IntegrityError naming it, and
// no receipt is signed over such a state.
func TestVerifiedEntry(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(t *testing.T) func(*badger.Txn) error
		index int64
		what  string
	}{
		{"bytes changed, hashes left", func(t *testing.T) func(*badger.Txn) error {
			return func(txn *badger.Txn) error {
				v := get(t, txn, entryKey(9))
				v[0] ^= 1
				return txn.Set(entryKey(9), v)
			}
		}, 9, "entry not in the signed tree"},
		{"bytes and leaf hash changed", func(t *testing.T) func(*badger.Txn) error {
			return func(txn *badger.Txn) error {
				forged := []byte("forged decision")
				h := tlog.RecordHash(forged)
				k := make([]byte, 9)
				k[0] = 'h'
				binary.BigEndian.PutUint64(k[1:], uint64(tlog.StoredHashIndex(0, 9)))
				txn.Set(k, h[:])
				return txn.Set(entryKey(9), forged)
			}
		}, 9, "entry not in the signed tree"},
		{"entry smuggled past the checkpoint", func(t *testing.T) func(*badger.Txn) error {
			return func(txn *badger.Txn) error {
				size := make([]byte, 8)
				binary.BigEndian.PutUint64(size, 11)
				txn.Set([]byte("m/size"), size)
				return txn.Set(entryKey(10), []byte("smuggled"))
			}
		}, 10, "entry beyond the signed checkpoint"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := newLog(t, 10)
			l, err := ledger.Open(dir, testkit.Key(t, 1))
			if err != nil {
				t.Fatal(err)
			}
			want, err := l.VerifiedEntry(tc.index % 10)
			if err != nil || !bytes.Equal(want, entries(10)[tc.index%10]) {
				t.Fatalf("before tampering: %q, %v", want, err)
			}
			l.Close()
			badgerEdit(t, dir, tc.edit(t))
			if l, err = ledger.Open(dir, testkit.Key(t, 1)); err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			_, err = l.VerifiedEntry(tc.index)
			var ie *ledger.IntegrityError
			if !errors.As(err, &ie) || ie.Index != tc.index || ie.What != tc.what {
				t.Fatalf("VerifiedEntry(%d) = %v, want %q at %d", tc.index, err, tc.what, tc.index)
			}
			if _, err := l.Receipt(tc.index); err == nil {
				t.Fatal("a receipt was signed over a tampered state")
			}
		})
	}
}
