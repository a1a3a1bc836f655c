package audit_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

const platform = "linux/amd64"

// agentPath is a Go binary TestMain builds once, from a git commit, so
// that it carries real, clean build metadata: the agent the runner
// fixture's decisions admit.
var agentPath string

func TestMain(m *testing.M) {
	var remove func()
	agentPath, remove = testkit.AgentForMain("writ-audit-agent-")
	code := m.Run()
	remove()
	os.Exit(code)
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

// runnerLedger is a real ledger directory on disk: an authority log (a
// root, an operator who may instruct "demo" on runner-*, a release
// engineer, a pin of the test agent) and the runner's key parameters.
type runnerLedger struct {
	dir                string
	logKey             *sign.PrivateKey
	root, op, op2, rel *sign.PrivateKey
	kp                 ledgerdir.KeyParams
	clock              atomic.Int64 // seconds after Epoch the runner's clock reads
}

const runnerOrigin = "example.com/runner"

func newRunnerLedger(t *testing.T) *runnerLedger {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	l := &runnerLedger{dir: t.TempDir(), logKey: testkit.Key(t, 50), root: testkit.Key(t, 1), op: testkit.Key(t, 10), op2: testkit.Key(t, 13), rel: testkit.Key(t, 11),
		kp: ledgerdir.KeyParams{Recipients: []age.Recipient{id.Recipient()}, Identities: []age.Identity{id}, Rand: rand.Reader}}
	createAuthority(t, filepath.Join(l.dir, ledgerdir.AuthorityDir), runnerOrigin, l.logKey, nil).Close()
	l.append(t, l.baseEntries(t, 30*24*time.Hour)...)
	return l
}

// baseEntries are the authority records every test starts from; the pin
// lasts pinFor after Epoch.
func (l *runnerLedger) baseEntries(t *testing.T, pinFor time.Duration) [][]byte {
	relDel := testkit.Delegation(l.rel, []string{"pin"}, "", "")
	pin, err := transfer.NewPin(agentPath, transfer.PinOptions{Artifact: "agent", Version: "1.0.0", Platform: platform,
		IssuedAt: testkit.Epoch.Add(-time.Hour), Expires: testkit.Epoch.Add(pinFor)})
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{
		testkit.Seal(t, testkit.Root(1, l.root), l.root),
		testkit.Seal(t, testkit.Delegation(l.op, []string{"instruct"}, "demo", "runner-*"), l.root),
		testkit.Seal(t, relDel, l.root),
		testkit.Seal(t, testkit.Delegation(l.op2, []string{"instruct"}, "demo", "runner-*"), l.root),
		testkit.Seal(t, pin, l.rel),
	}
}

// append appends entries to the authority log, as `writ ledger append`
// does from another process, and returns the index of the first.
func (l *runnerLedger) append(t *testing.T, entries ...[]byte) int64 {
	t.Helper()
	auth := openAuthority(t, filepath.Join(l.dir, ledgerdir.AuthorityDir), l.logKey, l.now)
	defer auth.Close()
	i, err := auth.Append(entries)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func (l *runnerLedger) config(mode verify.Mode) verify.Config {
	return verify.Config{Machine: "runner-1", Mode: mode, Platform: platform, Now: l.now}
}

// now is the test's clock, for the runner and the authority log alike:
// Epoch plus l.clock seconds.
func (l *runnerLedger) now() time.Time {
	return testkit.Epoch.Add(time.Duration(l.clock.Load()) * time.Second)
}

// open opens the runner with mode and cfg edits; it is closed when the
// test ends.
func (l *runnerLedger) open(t *testing.T, mode verify.Mode, trust verify.Trust, edit func(*verify.Config)) *runner.Runner {
	t.Helper()
	c := l.config(mode)
	if edit != nil {
		edit(&c)
	}
	r, err := runner.Open(l.dir, trust, l.kp, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// signed returns a signed instruction with the n-th id, edited.
func (l *runnerLedger) signed(t *testing.T, n int, edit func(*schemas.Instruction)) []byte {
	i := testkit.Instruction(fmt.Sprintf("%032x", n))
	if edit != nil {
		edit(i)
	}
	return testkit.Seal(t, i, l.op)
}

func bare(t *testing.T, i *schemas.Instruction) []byte {
	b, err := schemas.Encode(i)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
