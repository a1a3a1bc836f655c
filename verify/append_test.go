package verify_test

import (
	"crypto/rand"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/verify"
)

// TestAppendRecords: records the authority accepts are appended in
// order; a batch with a refused record appends nothing and names the
// record's position (*AppendError, with the rule); a directory without a
// ledger is a *ledgerdir.OpenError.
func TestAppendRecords(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	rootKey, op, stranger := testkit.Key(t, 1), testkit.Key(t, 10), testkit.Key(t, 99)
	now := time.Now()
	r := testkit.Root(1, rootKey)
	r.IssuedAt, r.Expires = now.Add(-time.Hour).Unix(), now.Add(time.Hour).Unix()
	d := ledgerdir.Dir(filepath.Join(t.TempDir(), "ledger"))
	a, err := verify.InitAuthority(d, "example.com/append", ledgerdir.NewKey{Recipients: []age.Recipient{id.Recipient()}, Rand: rand.Reader}, testkit.Seal(t, r, rootKey))
	if err != nil {
		t.Fatal(err)
	}
	a.Log.Close()
	delegate := func(k byte) []byte {
		del := testkit.Delegation(testkit.Key(t, k), []string{"instruct"}, "demo", "runner-1")
		del.IssuedAt, del.NotBefore, del.NotAfter = now.Add(-time.Minute).Unix(), now.Add(-time.Minute).Unix(), now.Add(time.Hour).Unix()
		return testkit.Seal(t, del, rootKey)
	}
	unknown := testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "demo", "runner-1"), stranger)
	unlock := ledgerdir.Unlock{Identities: func() ([]age.Identity, error) { return []age.Identity{id}, nil }}
	for _, tc := range []struct {
		name    string
		entries [][]byte
		indexes []int64 // appended, in order
		record  int     // the refused record's position, -1 for none
		size    int64   // the log's size after
	}{
		{"two accepted", [][]byte{delegate(10), delegate(11)}, []int64{1, 2}, -1, 3},
		{"second refused", [][]byte{delegate(12), unknown}, nil, 1, 3},
		{"first refused", [][]byte{unknown, delegate(13)}, nil, 0, 3},
	} {
		auth, applied, err := verify.AppendRecords(d, tc.entries, unlock)
		var ae *verify.AppendError
		var re *delegation.RecordError
		if tc.record >= 0 {
			if !errors.As(err, &ae) || ae.Record != tc.record || !errors.As(err, &re) || re.Rule != delegation.RuleUnknownKey || auth != nil {
				t.Fatalf("%s: %v, want an *AppendError for record %d", tc.name, err, tc.record)
			}
		} else {
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			for i, ap := range applied {
				if ap.Index != tc.indexes[i] {
					t.Fatalf("%s: record %d appended at %d, want %d", tc.name, i, ap.Index, tc.indexes[i])
				}
			}
			auth.Log.Close()
		}
		if k, err := d.LogKey(ledgerdir.AuthorityLog); err != nil {
			t.Fatal(err)
		} else if check, err := verify.OpenAuthority(d, verify.Trust{VKey: k}, nil); err != nil || check.Checkpoint.Size != tc.size {
			t.Fatalf("%s: after, %v", tc.name, err)
		} else {
			check.Log.Close()
		}
	}
	_, _, err = verify.AppendRecords(ledgerdir.Dir(t.TempDir()), [][]byte{delegate(14)}, unlock)
	var oe *ledgerdir.OpenError
	if !errors.As(err, &oe) {
		t.Fatalf("no ledger: %v, want a *ledgerdir.OpenError", err)
	}
}
