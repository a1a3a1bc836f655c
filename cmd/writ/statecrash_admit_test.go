package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// TestStateCrashAdmit kills `writ admit` at random moments on a replica
// that a sync run to the end grew (every other round with its state
// binding deleted first, so that the admission replays the whole
// authority log and writes its index again, which the kill may cut):
// after each kill the authority index does not diverge from a full
// replay and the authority loaded from it answers as the full replay
// does; the decision log holds every admission that exited 0, and at
// most the killed one more; and an admission run to the end afterwards
// is admitted, its index extended, not replayed.
func TestStateCrashAdmit(t *testing.T) {
	w := newCrashWorld(t, "example.com/state-crash-admit")
	wdir := ledgerdir.Dir(filepath.Join(w.dir, "W"))
	w.write("agent", []byte("an agent binary (admit runs --mode off)\n"))
	grow := func() [][]byte {
		names, _ := w.batch(20)
		writIn(t, w.dir, append([]string{"ledger", "append", "--dir", "W"}, names...)...)
		writIn(t, w.dir, "ledger", "publish", "--dir", "W", "--to", "P")
		return storedEntries(t, wdir.AuthorityStore())
	}
	grow()
	vkey := strings.TrimSpace(writIn(t, w.dir, "ledger", "vkey", "--dir", "W"))
	writIn(t, w.dir, "ledger", "sync", "--dir", "R", "--from", "P", "--vkey", vkey)
	r := ledgerdir.Dir(filepath.Join(w.dir, "R"))
	dispatches := 0
	dispatch := func() string {
		dispatches++
		now := time.Now()
		in := testkit.Instruction(fmt.Sprintf("%016x%016x", 0xad, dispatches))
		in.Agent.Name = "unpinned-agent" // the rounds pin "agent"
		in.Machine, in.IssuedAt, in.NotBefore, in.Expires = "runner-2", now.Unix(), now.Add(-time.Minute).Unix(), now.Add(time.Hour).Unix()
		name := fmt.Sprintf("dispatch-%d.cose", dispatches)
		w.write(name, testkit.Seal(t, in, w.op))
		return name
	}
	admit := func(delay time.Duration) bool {
		return w.runKilled(delay, "admit", "--ledger", "R", "--machine", "runner-2", "--mode", "off", "--work-factor", "10", "--agent-binary", "agent", dispatch())
	}
	if admit(time.Hour) { // the runner's key and decision log: not killed
		t.Fatal("the first admission was killed")
	}
	acked := int64(1)
	var killed, inside, replayed int
	for round := range stateCrashRounds() {
		published := grow()
		writIn(t, w.dir, "ledger", "sync", "--dir", "R", "--from", "P")
		if round%2 == 1 {
			err := testkit.EditStore(r.AuthorityStore(), func(txn *badger.Txn) error { return txn.Delete([]byte("m/state")) })
			if err != nil {
				t.Fatal(err)
			}
		}
		wasKilled := admit(w.killDelay())
		if !wasKilled {
			acked++
		} else {
			killed++
		}
		size, why := w.checkStore(r.AuthorityStore(), w.vkey, published)
		if size != int64(len(published)) {
			t.Fatalf("round %d: the replica holds %d authority entries, the sync stored %d", round, size, len(published))
		}
		if why != "" {
			replayed++
		}
		switch n := decisions(t, r); {
		case n == acked:
		case wasKilled && n == acked+1:
			acked, inside = n, inside+1 // killed after its decision was stored
		default:
			t.Fatalf("round %d: the decision log holds %d decisions, %d acknowledged", round, n, acked)
		}
		t.Logf("round %d: %d decisions acknowledged; killed %v; the load replayed: %q", round, acked, wasKilled, why)
	}
	last := exec.Command("writ", "--json", "admit", "--ledger", "R", "--machine", "runner-2", "--mode", "off", "--agent-binary", "agent", dispatch())
	last.Dir, last.Env = w.dir, append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	var stderr bytes.Buffer
	last.Stderr = &stderr
	out, err := last.Output()
	if err != nil || !strings.Contains(string(out), `"verdict":"admitted"`) || strings.Contains(stderr.String(), "persisted state was not used") {
		t.Fatalf("the admission after the rounds: %v\n%s\n%s\nwant admitted from the extended index (no replay note)", err, out, stderr.String())
	}
	if n := decisions(t, r); n != acked+1 {
		t.Fatalf("after the last admission the decision log holds %d decisions, want %d", n, acked+1)
	}
	fmt.Printf("state crash: admit: %d rounds, %d killed, %d after their decision was stored, %d loads replayed, acknowledged decisions lost: 0\n",
		stateCrashRounds(), killed, inside, replayed)
}

// decisions opens the decision log of the ledger directory d for writing
// (which recovers what a killed writer left) and returns its size.
func decisions(t *testing.T, d ledgerdir.Dir) int64 {
	t.Helper()
	if _, err := os.Stat(d.DecisionsStore()); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(d.DecisionsStore(), nil)
	if err != nil {
		t.Fatalf("reopening the decision log after SIGKILL: %v", err)
	}
	defer l.Close()
	return l.Size()
}
