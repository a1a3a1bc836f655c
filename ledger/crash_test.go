package ledger_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
)

// A crashWriter is one durable path the kill rounds run against: a child
// process writes through it until it is killed, and the parent checks
// what the path stored. Each new durable path (the persisted replay
// state, the writer service, the engine) adds one to crashWriters and a
// test that calls killRounds with it.
type crashWriter struct {
	// write runs in the child, against the state in dir, forever: after
	// each write the path acknowledges as durable it calls ack with the
	// first index written and how many. An error ends the child (exit 2,
	// the error on stdout, which fails the round).
	write func(dir string, ack func(first, n int64)) error
	// check runs in the parent after each kill: it reopens the state in
	// dir, checks it (t.Fatalf on a failure), and returns how many
	// entries it holds, all of which must verify.
	check func(t *testing.T, dir string) (stored int64)
}

// crashWriters are the children TestMain can run, by name
// ($WRIT_CRASH_WRITER).
var crashWriters = map[string]crashWriter{
	"ledger-append": {write: appendForever, check: reopenAndVerify},
}

// TestMain doubles as the crash rounds' child: with WRIT_CRASH_CHILD set
// to a directory, the test binary runs the writer $WRIT_CRASH_WRITER on
// it until it is killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("WRIT_CRASH_CHILD"); dir != "" {
		crashChild(dir, os.Getenv("WRIT_CRASH_WRITER"))
		return
	}
	os.Exit(m.Run())
}

// crashChild runs writer name on dir, printing "ack FIRST COUNT" after
// each durable write.
func crashChild(dir, name string) {
	w, ok := crashWriters[name]
	if !ok {
		fmt.Println("error: no crash writer", name)
		os.Exit(2)
	}
	var out sync.Mutex
	err := w.write(dir, func(first, n int64) {
		out.Lock()
		fmt.Printf("ack %d %d\n", first, n)
		out.Unlock()
	})
	fmt.Println("error", err)
	os.Exit(2)
}

// crashRounds is 5 by default; the benchmark script sets
// WRIT_CRASH_ROUNDS=50.
func crashRounds() int {
	if n, err := strconv.Atoi(os.Getenv("WRIT_CRASH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5
}

// crashSummary is what the kill rounds proved.
type crashSummary struct {
	rounds int // rounds run to the end
	inside int // kills that landed inside a commit: more stored than acknowledged
	lost   int64
}

// killRounds runs crashRounds() rounds against the writer name on dir:
// start a child writing, SIGKILL it at a random moment (30 to 280 ms),
// check the state; every write the child saw acknowledged must be
// stored. Each round continues the same state. It prints one summary
// line on stdout, whatever the outcome ("crash: ledger-append: 5 rounds,
// 2 killed inside a commit, acknowledged entries lost: 0"): go test shows
// it under -v and with a failure, and .ci/run shows it in every run.
func killRounds(t *testing.T, name, dir string) {
	w := crashWriters[name]
	var sum crashSummary
	defer func() {
		fmt.Printf("crash: %s: %d rounds, %d killed inside a commit, acknowledged entries lost: %d\n", name, sum.rounds, sum.inside, sum.lost)
	}()
	for round := range crashRounds() {
		acked := killOnce(t, round, name, dir)
		stored := w.check(t, dir)
		if stored < acked+1 {
			sum.lost = acked + 1 - stored
			t.Fatalf("round %d: %d entries stored, but entry %d was acknowledged", round, stored, acked)
		}
		if stored > acked+1 {
			sum.inside++
		}
		sum.rounds++
		t.Logf("round %d: killed after %d acknowledged entries; %d stored, verified", round, acked+1, stored)
	}
}

// killOnce starts the child writer name on dir, kills it, and returns the
// last index it saw acknowledged (-1 for none).
func killOnce(t *testing.T, round int, name, dir string) int64 {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "WRIT_CRASH_CHILD="+dir, "WRIT_CRASH_WRITER="+name)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := int64(-1)
	var childErr string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var first, n int64
			if _, err := fmt.Sscanf(sc.Text(), "ack %d %d", &first, &n); err == nil {
				acked = max(acked, first+n-1)
			} else {
				childErr = sc.Text()
			}
		}
	}()
	time.Sleep(time.Duration(30+rand.IntN(250)) * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	<-done
	if childErr != "" {
		t.Fatalf("round %d: child: %s", round, childErr)
	}
	return acked
}

// appendForever appends from 8 goroutines to the log in dir; ack is
// called after each Append returns, that is, after its batch is durable.
func appendForever(dir string, ack func(first, n int64)) error {
	l, err := ledger.Open(dir, testkit.Key(&testing.T{}, 1))
	if err != nil {
		return err
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := 0; ; i++ {
				n := 1 + (i+g)%3
				var batch [][]byte
				for j := range n {
					batch = append(batch, []byte(fmt.Sprintf("pid %d goroutine %d append %d part %d %s", os.Getpid(), g, i, j, strings.Repeat("x", (i*7+j)%200))))
				}
				first, err := l.Append(batch)
				if err != nil {
					errs <- err
					return
				}
				ack(first, int64(n))
			}
		}()
	}
	return <-errs
}

// reopenAndVerify opens the log in dir for writing (crash recovery) and
// verifies it under the verifier key written beside it (DIR.vkey) when
// it was created.
func reopenAndVerify(t *testing.T, dir string) int64 {
	vkey, err := os.ReadFile(dir + ".vkey")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(dir, nil)
	if err != nil {
		t.Fatalf("reopening after SIGKILL: %v", err)
	}
	defer l.Close()
	k, err := formats.ParseLogKey(string(vkey))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Verify(k, nil); err != nil {
		t.Fatalf("verify after SIGKILL: %v", err)
	}
	return l.Size()
}

// TestCrashConsistency kills a child process that appends concurrently
// with SIGKILL at a random moment, then reopens the log: every append the
// child saw acknowledged must be there, the tree must be consistent, and
// Verify must pass. Each round continues the same log.
func TestCrashConsistency(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log")
	l, err := ledger.Create(dir, "example.com/crash", testkit.Key(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = os.WriteFile(dir+".vkey", []byte(l.VerifierKey()), 0o600)
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	killRounds(t, "ledger-append", dir)
}
