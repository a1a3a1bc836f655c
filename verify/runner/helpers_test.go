package runner_test

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

const platform = "linux/amd64"

// agentPath is a Go binary TestMain builds once, from a git commit, so
// that it carries real, clean build metadata.
var agentPath string

func TestMain(m *testing.M) {
	var remove func()
	agentPath, remove = testkit.AgentForMain("writ-runner-agent-")
	code := m.Run()
	remove()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == "" {
		code = checkRuleCoverage()
	}
	os.Exit(code)
}

// runnerRules are the rules these tests assert in off, warn and enforce
// (admitIn, admitEach) through a runner's ledger directory, its memory
// and its receipts; package verify's tests assert every other rule of the
// vocabulary, and leave these to this package.
var runnerRules = []string{
	rules.Revoked, rules.Internal, rules.LedgerUnverified, rules.LedgerInconsistent, rules.RootUntrusted, rules.VKeyMismatch,
	rules.LedgerUnwitnessed, rules.Replay, rules.WorkClaimed, rules.ReceiptMissing, rules.ReceiptInvalid,
}

// asserted holds the rules a test asserted in all three modes.
var asserted = struct {
	sync.Mutex
	rules map[string]bool
}{rules: map[string]bool{}}

func assertedRule(rule string) {
	asserted.Lock()
	asserted.rules[rule] = true
	asserted.Unlock()
}

// checkRuleCoverage fails the package when a rule of runnerRules has no
// test asserting its exact verdict in each of the three modes. It runs
// only when every test ran.
func checkRuleCoverage() int {
	code := 0
	for _, r := range runnerRules {
		if !asserted.rules[r] {
			fmt.Fprintf(os.Stderr, "rule %s: no test asserts its verdict in off, warn and enforce\n", r)
			code = 1
		}
	}
	return code
}

func bare(t *testing.T, i *schemas.Instruction) []byte {
	b, err := schemas.Encode(i)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

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

// openAuthority opens an authority log to append to it, with clock
// (epochClock when nil).
func openAuthority(t testing.TB, dir string, key *sign.PrivateKey, clock func() time.Time) *ledger.Log {
	t.Helper()
	l, err := ledger.Open(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	if clock == nil {
		clock = epochClock
	}
	l.Now = clock
	return l
}

// The verdicts a rule gives in off, warn and enforce.
var (
	refusedAll  = [3]schemas.Verdict{"refused", "refused", "refused"}
	unsignedish = [3]schemas.Verdict{"admitted-unsigned", "would-refuse", "refused"}
	softAll     = [3]schemas.Verdict{"admitted", "would-refuse", "refused"}
)
