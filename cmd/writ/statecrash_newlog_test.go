package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// TestStateCrashNewLog kills the first sync of a new replica, and an
// import into a new directory, at random moments. Either writes the new
// log beside its place (.authority.new), bulk-loaded, and renames it into
// place once everything in it is durable, so a kill leaves either no log,
// or the whole of it, whose index the next load uses; never a part. The
// next one removes what a killed one left and runs to the end.
func TestStateCrashNewLog(t *testing.T) {
	w := newCrashWorld(t, "example.com/state-crash-first-sync")
	published := w.publishBatches(6)
	vkey := strings.TrimSpace(writIn(t, w.dir, "ledger", "vkey", "--dir", "W"))
	writIn(t, w.dir, "ledger", "export", "--dir", "W", "--out", "W.export")
	for _, act := range [][]string{
		{"ledger", "sync", "--dir", "N", "--from", "P", "--vkey", vkey},
		{"ledger", "import", "--dir", "N", "--vkey", vkey, "W.export"},
	} {
		killed, whole, left := w.crashNew(act, published)
		fmt.Printf("state crash: new log by %s: %d rounds, %d killed, %d left the log in place (whole), %d left the directory beside it: nothing partial\n",
			strings.Join(act[:2], " "), stateCrashRounds(), killed, whole, left)
	}
}

// crashNew runs act, which creates the authority log of the ledger
// directory N, killed at random moments, each round from no log: after
// each, N holds no authority log or all of published; a last run to the
// end leaves all of it and nothing beside it.
func (w *crashWorld) crashNew(act []string, published [][]byte) (killed, whole, left int) {
	t := w.t
	store := ledgerdir.Dir(filepath.Join(w.dir, "N")).AuthorityStore()
	beside := filepath.Join(w.dir, "N", ".authority.new")
	fresh := func() {
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
	}
	fresh()
	if w.runKilled(time.Hour, act...) { // how long it takes, for killDelay
		t.Fatalf("%s was killed", act[1])
	}
	for round := range stateCrashRounds() {
		fresh()
		if w.runKilled(w.killDelay(), act...) {
			killed++
		}
		if _, err := os.Stat(beside); err == nil {
			left++ // the next one removes it
		}
		if _, err := os.Stat(store); errors.Is(err, os.ErrNotExist) {
			continue
		}
		whole++
		if size, why := w.checkStore(store, w.vkey, published); size != int64(len(published)) || why != "" {
			t.Fatalf("%s, round %d: the log in place holds %d entries of %d (the load replayed: %q)", act[1], round, size, len(published), why)
		}
	}
	fresh()
	if w.runKilled(time.Hour, act...) {
		t.Fatalf("the last %s was killed", act[1])
	}
	if size, why := w.checkStore(store, w.vkey, published); size != int64(len(published)) || why != "" {
		t.Fatalf("after the last %s: %d entries of %d, the load replayed: %q", act[1], size, len(published), why)
	}
	if _, err := os.Stat(beside); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the last %s left %s (stat: %v)", act[1], beside, err)
	}
	return killed, whole, left
}
