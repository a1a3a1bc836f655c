package ledger

import (
	"fmt"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/formats"
	"golang.org/x/mod/sumdb/tlog"
)

// TestHashCacheAfterTruncate (a hostile review's attack, kept as a
// regression test): hashes of entries a sync or import committed past the
// signed checkpoint (unproven), read by a proof, and then removed by
// truncateTo must not be served for the different entries later stored at
// those indexes.
func TestHashCacheAfterTruncate(t *testing.T) {
	l, err := Create(t.TempDir()+"/log", "example.com/cache", testkit.Key(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	batch := func(tag string, n int) [][]byte {
		var b [][]byte
		for i := range n {
			b = append(b, []byte(fmt.Sprintf("%s %d", tag, i)))
		}
		return b
	}
	if _, err := l.Append(batch("honest", 32)); err != nil {
		t.Fatal(err)
	}
	signed32, _ := l.Checkpoint()
	cp32, _ := formats.OpenCheckpoint(signed32, l.lkey)
	// What syncextend/copyFrom do: a committed batch of unproven entries
	// past the checkpoint, size advanced.
	err = l.db.Update(func(txn Txn) error {
		r := txnHashReader(txn)
		for i, e := range batch("forged", 32) {
			n := int64(32 + i)
			h, err := tlog.StoredHashes(n, e, r)
			if err != nil {
				return err
			}
			if err := putEntry(txn, n, e, h); err != nil {
				return err
			}
		}
		return txn.Set(keySize, sizeBytes(64))
	})
	if err != nil {
		t.Fatal(err)
	}
	l.size.Store(64)
	if _, err := l.ProveInclusion(40, 0); err != nil { // a proof served meanwhile
		t.Fatal(err)
	}
	// The source turns out forged: the partial copy is removed...
	if err := l.truncateTo(32); err != nil {
		t.Fatal(err)
	}
	// ...and the genuine entries arrive.
	if _, err := l.Append(batch("honest2", 32)); err != nil {
		t.Fatal(err)
	}
	signed64, _ := l.Checkpoint()
	cp64, _ := formats.OpenCheckpoint(signed64, l.lkey)
	p, err := l.ProveInclusion(40, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.RootHash != cp64.Hash || p.Verify() != nil {
		t.Errorf("inclusion proof of 40: root %x, checkpoint root %x, verify %v", p.RootHash[:4], cp64.Hash[:4], p.Verify())
	}
	if _, err := l.CheckConsistent(cp32, cp64); err != nil {
		t.Errorf("CheckConsistent of the log's own checkpoints: %v", err)
	}
	if _, err := l.Verify(l.lkey, nil); err != nil {
		t.Errorf("the store itself verifies: %v", err)
	}
}
