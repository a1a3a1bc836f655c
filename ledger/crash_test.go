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
)

// TestMain doubles as the crash test's child: with WRIT_CRASH_CHILD set,
// the test binary appends to that log until it is killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("WRIT_CRASH_CHILD"); dir != "" {
		crashChild(dir)
		return
	}
	os.Exit(m.Run())
}

// crashChild appends from 8 goroutines and prints "ack FIRST COUNT" after
// each Append returns, that is, after its batch is durable.
func crashChild(dir string) {
	l, err := ledger.Open(dir, testkit.Key(&testing.T{}, 1))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	var out sync.Mutex
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				n := 1 + (i+g)%3
				var batch [][]byte
				for j := range n {
					batch = append(batch, []byte(fmt.Sprintf("pid %d goroutine %d append %d part %d %s", os.Getpid(), g, i, j, strings.Repeat("x", (i*7+j)%200))))
				}
				first, err := l.Append(batch)
				if err != nil {
					fmt.Println("error", err)
					os.Exit(2)
				}
				out.Lock()
				fmt.Printf("ack %d %d\n", first, n)
				out.Unlock()
			}
		}()
	}
	wg.Wait()
}

// crashRounds is 5 by default; the benchmark script sets
// WRIT_CRASH_ROUNDS=50.
func crashRounds() int {
	if n, err := strconv.Atoi(os.Getenv("WRIT_CRASH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5
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
	vkey := l.VerifierKey()
	l.Close()
	rounds := crashRounds()
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "WRIT_CRASH_CHILD="+dir)
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
		l, err := ledger.Open(dir, nil)
		if err != nil {
			t.Fatalf("round %d: reopening after SIGKILL: %v", round, err)
		}
		size := l.Size()
		if size < acked+1 {
			t.Fatalf("round %d: the log holds %d entries, but entry %d was acknowledged", round, size, acked)
		}
		cp, err := l.Verify(vkey, nil)
		if err != nil {
			t.Fatalf("round %d: verify after SIGKILL: %v", round, err)
		}
		l.Close()
		t.Logf("round %d: killed after %d acknowledged entries; reopened at size %d, checkpoint size %d, verified", round, acked+1, size, cp.Size)
	}
}
