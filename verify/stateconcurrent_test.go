package verify_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/verify"
)

// TestConcurrentAppendsKeepIndex (hostile review, issue 30): many
// goroutines append through one Authority at once: records shared between
// goroutines (duplicates across requests of one batch), requests whose
// last record is refused (Reset of a request mid-batch), all in group
// commit. Afterwards no content appears twice in the log, a fresh load
// extends the persisted state without replaying, and the index matches a
// full replay.
func TestConcurrentAppendsKeepIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "authority")
	key := testkit.Key(t, 200)
	l := createAuthority(t, dir, "example.com/conc", key, nil)
	a, err := verify.LoadAuthority(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	root, op := testkit.Key(t, 1), testkit.Key(t, 2)
	if _, err := a.Append([][]byte{testkit.Seal(t, testkit.Root(1, root), root),
		testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "demo", "runner-1"), root)}); err != nil {
		t.Fatal(err)
	}
	instr := func(n int) []byte {
		return testkit.Seal(t, testkit.Instruction(fmt.Sprintf("%032x", n)), op)
	}
	bad := testkit.Seal(t, testkit.Instruction(fmt.Sprintf("%032x", 999999)), testkit.Key(t, 77)) // unknown signer
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 30 {
				var recs [][]byte
				switch r % 3 {
				case 0:
					recs = [][]byte{instr(r)} // shared by all goroutines
				case 1:
					recs = [][]byte{instr(1000 + g*100 + r), instr(20000 + r)} // own + shared (new to the log)
				case 2:
					recs = [][]byte{instr(5000 + g*100 + r), bad} // refused as a whole
				}
				if _, err := a.Append(recs); err == nil {
					mu.Lock()
					accepted += len(recs)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	size := l.Size()
	l.Close()
	if int64(accepted)+2 != size {
		t.Errorf("accepted %d records, the log holds %d past the first 2", accepted, size-2)
	}
	l2, err := ledger.Open(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	a2, err := verify.LoadAuthority(l2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a2.Replayed != "" {
		t.Errorf("reload replayed: %s", a2.Replayed)
	}
	ref, marks := fullReplay(t, l2)
	if err := verify.CheckStateIndex(l2, ref, marks.Marks); err != nil {
		t.Errorf("index vs full replay: %v", err)
	}
	t.Logf("log size %d", size)
}
