package verify_test

import (
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/sign"
)

// epochClock is the ledgers' clock in these tests: the records they hold
// are issued around testkit.Epoch, and the time a log accepts a record is
// its clock's (the time rule).
func epochClock() time.Time { return testkit.Epoch }

// createAuthority creates an authority log (with its checkpoint history)
// at dir, whose clock is clock (epochClock when nil).
func createAuthority(t testing.TB, dir, origin string, key *sign.PrivateKey, clock func() time.Time) *ledger.Log {
	t.Helper()
	if clock == nil {
		clock = epochClock
	}
	l, err := ledger.CreateWithHistory(dir, origin, key, clock)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
