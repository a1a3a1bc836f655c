package verify_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/verify"
)

// TestConcurrentAppend: many goroutines append valid and refused records
// at once; every valid one lands exactly once, every refused one is
// refused with its rule and stores nothing, and the log replays to the
// same state.
func TestConcurrentAppend(t *testing.T) {
	a, _, _ := benchLedger(t, 0)
	op, stranger := testkit.Key(t, 10), testkit.Key(t, 99)
	const n = 400
	var wg sync.WaitGroup
	var mu sync.Mutex
	okCount, refused := 0, 0
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 16 {
				signer := op
				if i%5 == 0 {
					signer = stranger
				}
				_, err := a.Append([][]byte{testkit.Seal(t, testkit.Instruction(fmt.Sprintf("%032x", i)), signer)})
				mu.Lock()
				var re *delegation.RecordError
				switch {
				case err == nil && signer == op:
					okCount++
				case errors.As(err, &re) && re.Rule == delegation.RuleUnknownKey && signer == stranger:
					refused++
				default:
					t.Errorf("record %d: %v", i, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if okCount != n*4/5 || refused != n/5 {
		t.Fatalf("%d appended, %d refused", okCount, refused)
	}
	if got := a.Log.Size(); got != int64(2+okCount) {
		t.Fatalf("log size %d, want %d", got, 2+okCount)
	}
	again, err := verify.LoadAuthority(a.Log, a.Log.Key())
	if err != nil {
		t.Fatal(err)
	}
	if again.State.Size() != a.State.Size() {
		t.Fatalf("replayed state size %d, live state %d", again.State.Size(), a.State.Size())
	}
}
