package ledger

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/internal/hashcache"
	"golang.org/x/mod/sumdb/tlog"
)

// TestProofHashCache: proofs served through the cache, cold and warm,
// equal proofs computed straight from the store, at every index of a log
// grown in steps; and a full cache starts over without changing answers.
func TestProofHashCache(t *testing.T) {
	l, err := Create(t.TempDir()+"/log", "example.com/cache", testkit.Key(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	direct := func(size, index int64) ([]tlog.Hash, tlog.Hash) {
		var path tlog.RecordProof
		var root tlog.Hash
		err := l.db.View(func(txn Txn) error {
			r := txnHashReader(txn)
			var err error
			if path, err = tlog.ProveRecord(size, index, r); err != nil {
				return err
			}
			root, err = tlog.TreeHash(size, r)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return path, root
	}
	for step := range 5 {
		batch := make([][]byte, 100+step*37)
		for i := range batch {
			batch[i] = []byte(fmt.Sprintf("entry %d.%d", step, i))
		}
		if _, err := l.Append(batch); err != nil {
			t.Fatal(err)
		}
		size := l.Size()
		for pass := range 2 { // cold, then warm
			for i := int64(0); i < size; i++ {
				p, err := l.ProveInclusion(i, 0)
				if err != nil {
					t.Fatal(err)
				}
				path, root := direct(size, i)
				if !reflect.DeepEqual([]tlog.Hash(p.Path), []tlog.Hash(path)) || p.RootHash != root || p.Verify() != nil {
					t.Fatalf("step %d pass %d: the proof of %d in %d differs from the store's", step, pass, i, size)
				}
				if i > 0 {
					c, err := l.ProveConsistency(i, 0)
					if err != nil || c.Verify() != nil {
						t.Fatalf("consistency %d -> %d: %v", i, size, err)
					}
				}
			}
		}
	}
	if len(l.proofHashes.Cached()) == 0 {
		t.Fatal("nothing was cached: the test does not exercise the cache")
	}
	for _, k := range l.proofHashes.Cached() {
		if level, _ := tlog.SplitStoredHashIndex(k); level < hashcache.MinLevel {
			t.Fatalf("a hash of level %d was cached", level)
		}
	}
}
