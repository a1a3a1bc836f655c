package witness_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/witness"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const crashOrigin = "example.com/crash"

// TestMain doubles as the crash test's child: with
// WRIT_WITNESS_CRASH_CHILD set to a directory, the test binary serves a
// witness over it on loopback until it is killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("WRIT_WITNESS_CRASH_CHILD"); dir != "" {
		crashChild(dir)
		return
	}
	os.Exit(m.Run())
}

// crashChild prints "addr HOST:PORT" once it listens, or "error ..." and
// exits 2.
func crashChild(dir string) {
	t := &testing.T{}
	_, vkey, err := formats.NewNoteSigner(crashOrigin, testkit.Key(t, 1))
	if err == nil {
		var w *witness.Witness
		w, err = witness.New(witness.Config{Name: witnessName, Key: testkit.Key(t, 200), Dir: dir, Logs: []string{vkey}})
		if err == nil {
			var ln net.Listener
			if ln, err = net.Listen("tcp", "127.0.0.1:0"); err == nil {
				fmt.Printf("addr %s\n", ln.Addr())
				err = http.Serve(ln, w.Handler())
			}
		}
	}
	fmt.Println("error", err)
	os.Exit(2)
}

// crashRounds is 5 by default; bench/witness_crash.sh sets
// WRIT_WITNESS_CRASH_ROUNDS=50.
func crashRounds() int {
	if n, err := strconv.Atoi(os.Getenv("WRIT_WITNESS_CRASH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5
}

// startChild starts a witness process on dir and returns it and its URL.
func startChild(t *testing.T, dir string) (*exec.Cmd, string) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "WRIT_WITNESS_CRASH_CHILD="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "addr ")
	if err != nil || !ok {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the witness process said %q (%v)", line, err)
	}
	return cmd, "http://" + addr
}

// TestCrashNoRollback SIGKILLs a witness process at a random moment while
// 8 submitters send it growing checkpoints of one log and of three forks
// of it (at 10%, 30% and 50% of its leaves), then restarts it on the same directory; over the rounds, no two
// checkpoints it cosigned (answered 200, or served after a restart) are
// inconsistent, and the size it holds after each restart is at least
// every size it cosigned before the kill.
func TestCrashNoRollback(t *testing.T) {
	if testing.Short() {
		t.Skip("starts witness processes")
	}
	leaves := int64(max(3000, 600*crashRounds())) // so that the log still grows in the last rounds
	main := newTestLog(t, crashOrigin, 1).grow(t, "main", int(leaves))
	branches := []*testLog{main}
	for _, at := range []int64{leaves / 10, leaves * 3 / 10, leaves / 2} {
		branches = append(branches, main.fork(t, int(at)).grow(t, fmt.Sprintf("fork@%d", at), int(leaves-at)))
	}
	roots := make([][]tlog.Hash, len(branches)) // roots[b][size]
	for b, l := range branches {
		for s := int64(0); s <= leaves; s++ {
			roots[b] = append(roots[b], l.root(t, s))
		}
	}
	cosigV, err := formats.NewCosignerVerifier(mustCosignerKey(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	type cp struct {
		size int64
		hash tlog.Hash
	}
	seen := map[cp]bool{} // every checkpoint the witness cosigned
	var acked int64       // the largest size answered 200
	var unanswered int    // restarts holding more than was answered: killed between the fsync and the answer
	for round := range crashRounds() {
		cmd, url := startChild(t, dir)
		// What the restarted witness holds.
		served, err := (&witness.Client{}).Checkpoint(context.Background(), url, crashOrigin)
		var held int64
		if err == nil {
			c := openServed(t, served, main.vkey, cosigV)
			held = c.Size
			seen[cp{c.Size, c.Hash}] = true
		} else if !errors.Is(err, witness.ErrNotCosigned) || acked > 0 {
			t.Fatalf("round %d: the restarted witness: %v", round, err)
		}
		if held < acked {
			t.Fatalf("round %d: the restarted witness holds size %d, but it cosigned size %d before the kill", round, held, acked)
		}
		if held > acked {
			unanswered++
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		var cosigned, conflicts, refused int
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(round), uint64(g)))
				old := held
				client := &witness.Client{HTTP: &http.Client{Timeout: 10 * time.Second}}
				for {
					b := r.IntN(len(branches))
					size := min(old+int64(r.IntN(20)), leaves)
					signed := branches[b].checkpoint(t, size)
					line, err := client.AddCheckpoint(context.Background(), url, old, branches[b].proof(t, old, size), signed)
					var conflict *witness.ConflictError
					mu.Lock()
					switch {
					case err == nil:
						if at, err := cosigV.Time(append(signed, line...)); err != nil || at.IsZero() {
							t.Errorf("round %d: a 200 answer that is not the witness's cosignature: %q", round, line)
						}
						seen[cp{size, roots[b][size]}] = true
						acked = max(acked, size)
						cosigned++
						old = size
					case errors.As(err, &conflict):
						conflicts++
						old = conflict.Size
					case errors.Is(err, witness.ErrInconsistent):
						refused++
					default: // the witness was killed
						mu.Unlock()
						return
					}
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(30+rand.IntN(270)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		wg.Wait()
		t.Logf("round %d: restarted holding size %d; %d cosigned, %d conflicts, %d refused as inconsistent before the kill; largest cosigned size %d",
			round, held, cosigned, conflicts, refused, acked)
	}
	cmd, url := startChild(t, dir)
	served, err := (&witness.Client{}).Checkpoint(context.Background(), url, crashOrigin)
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil {
		t.Fatal(err)
	}
	final := openServed(t, served, main.vkey, cosigV)
	if final.Size < acked {
		t.Fatalf("after the last kill the witness holds size %d, below the cosigned %d", final.Size, acked)
	}
	if final.Size > acked {
		unanswered++
	}
	seen[cp{final.Size, final.Hash}] = true
	// Every pair of cosigned checkpoints is consistent: the larger one's
	// branch has the smaller one's root at the smaller size. Which branch
	// a checkpoint is of is found from its root.
	var list []cp
	for c := range seen {
		list = append(list, c)
	}
	branchOf := func(c cp) []int {
		var bs []int
		for b := range branches {
			if roots[b][c.size] == c.hash {
				bs = append(bs, b)
			}
		}
		return bs
	}
	for i, x := range list {
		for _, y := range list[i+1:] {
			small, large := x, y
			if small.size > large.size {
				small, large = large, small
			}
			ok := false
			for _, b := range branchOf(large) {
				ok = ok || roots[b][small.size] == small.hash
			}
			if !ok {
				t.Fatalf("the witness cosigned inconsistent checkpoints: sizes %d (branches %v) and %d (branches %v)",
					small.size, branchOf(small), large.size, branchOf(large))
			}
		}
	}
	t.Logf("%d rounds: %d distinct checkpoints cosigned, all consistent; final size %d; %d restarts held a checkpoint whose answer the kill cut off",
		crashRounds(), len(list), final.Size, unanswered)
}

func mustCosignerKey(t *testing.T) string {
	k, err := formats.CosignerKey(witnessName, testkit.Key(t, 200).Public())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// openServed verifies a served checkpoint under the log's key and the
// witness's cosignature, and parses it.
func openServed(t *testing.T, served []byte, vkey string, cosigV *formats.CosigVerifier) witness.Checkpoint {
	t.Helper()
	v, err := formats.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Open(served, note.VerifierList(v)); err != nil {
		t.Fatalf("the served checkpoint: %v\n%s", err, served)
	}
	if _, err := cosigV.Time(served); err != nil {
		t.Fatalf("the served checkpoint has no cosignature of the witness: %v\n%s", err, served)
	}
	c, err := witness.ParseCheckpoint(served)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
