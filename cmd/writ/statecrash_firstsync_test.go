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

// TestStateCrashFirstSync kills the first sync of a new replica at random
// moments. Its store is bulk-loaded beside the replica's place
// (.authority.new) and renamed into place once everything in it is
// durable, so a kill leaves either no replica, or the whole of it, whose
// index the next load uses; never a part. The next first sync removes
// what a killed one left and runs to the end.
func TestStateCrashFirstSync(t *testing.T) {
	w := newCrashWorld(t, "example.com/state-crash-first-sync")
	published := w.publishBatches(6)
	vkey := strings.TrimSpace(writIn(t, w.dir, "ledger", "vkey", "--dir", "W"))
	sync := []string{"ledger", "sync", "--dir", "N", "--from", "P", "--vkey", vkey}
	if w.runKilled(time.Hour, sync...) { // how long a first sync takes, for killDelay
		t.Fatal("the first sync was killed")
	}
	store := ledgerdir.Dir(filepath.Join(w.dir, "N")).AuthorityStore()
	beside := filepath.Join(w.dir, "N", ".authority.new")
	var killed, whole, left int
	for round := range stateCrashRounds() {
		if err := os.RemoveAll(filepath.Join(w.dir, "N", "authority")); err != nil {
			t.Fatal(err)
		}
		if w.runKilled(w.killDelay(), sync...) {
			killed++
		}
		if _, err := os.Stat(beside); err == nil {
			left++ // the next first sync removes it
		}
		_, err := os.Stat(store)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		whole++
		if size, why := w.checkStore(store, w.vkey, published); size != int64(len(published)) || why != "" {
			t.Fatalf("round %d: the replica in place holds %d entries of %d (the load replayed: %q)", round, size, len(published), why)
		}
	}
	if err := os.RemoveAll(filepath.Join(w.dir, "N", "authority")); err != nil {
		t.Fatal(err)
	}
	if w.runKilled(time.Hour, sync...) {
		t.Fatal("the last first sync was killed")
	}
	if size, why := w.checkStore(store, w.vkey, published); size != int64(len(published)) || why != "" {
		t.Fatalf("after the last first sync: %d entries of %d, the load replayed: %q", size, len(published), why)
	}
	if _, err := os.Stat(beside); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the last first sync left %s (stat: %v)", beside, err)
	}
	fmt.Printf("state crash: first sync: %d rounds, %d killed, %d left a replica in place (whole), %d left the directory beside it: nothing partial\n",
		stateCrashRounds(), killed, whole, left)
}
