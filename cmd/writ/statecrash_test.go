package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/dgraph-io/badger/v4"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/internal/testkit/statequery"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/stateview"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
)

// The state crash rounds SIGKILL real writ processes (this test binary
// under the name writ) while they write an authority log and its state
// index, `writ ledger append` on a writer and `writ ledger sync` into a
// replica, then reopen the log: nothing acknowledged (a process that
// exited 0) is lost, a batch is stored whole or not at all, the index the
// kill left does not diverge from a full replay (verify.CheckStateIndex),
// and the authority loaded by extending it answers as a full replay does.

// stateCrashRounds is 5 by default; WRIT_CRASH_ROUNDS overrides it, as
// for the ledger's crash rounds.
func stateCrashRounds() int {
	if n, err := strconv.Atoi(os.Getenv("WRIT_CRASH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5
}

// crashWorld makes the records the rounds append: each batch is valid
// after any prefix of the earlier ones (a delegation to a fresh key and
// its revocation, a quarantine, a pin, instructions by the operator), so
// that a batch a kill lost changes nothing for the next.
type crashWorld struct {
	t        *testing.T
	dir      string
	rootKey  *sign.PrivateKey
	op       *sign.PrivateKey
	batches  int
	u        statequery.Universe
	vkey     *formats.LogKey
	rng      *rand.Rand
	duration time.Duration // how long the last process that ran to the end took
}

func newCrashWorld(t *testing.T, origin string) *crashWorld {
	dir := t.TempDir()
	w := &crashWorld{t: t, dir: dir, rootKey: testkit.Key(t, 1), op: testkit.Key(t, 10), rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))}
	now := time.Now()
	root := testkit.Root(1, w.rootKey)
	root.IssuedAt, root.Expires = now.Add(-time.Hour).Unix(), now.Add(365*24*time.Hour).Unix()
	w.write("root.cose", testkit.Seal(t, root, w.rootKey))
	writIn(t, dir, "ledger", "init", "--dir", "W", "--root", "root.cose", "--origin", origin, "--work-factor", "10")
	op := testkit.Delegation(w.op, []string{"instruct", "pin", "quarantine"}, "demo", "runner-*")
	op.IssuedAt, op.NotBefore, op.NotAfter = now.Add(-time.Minute).Unix(), now.Add(-time.Hour).Unix(), now.Add(24*time.Hour).Unix()
	w.write("op.del", testkit.Seal(t, op, w.rootKey))
	start := time.Now()
	writIn(t, dir, "ledger", "append", "--dir", "W", "op.del")
	w.duration = time.Since(start)
	k, err := formats.ParseLogKey(strings.TrimSpace(writIn(t, dir, "ledger", "vkey", "--dir", "W")))
	if err != nil {
		t.Fatal(err)
	}
	w.vkey = k
	w.u = statequery.Universe{Keys: []sign.PublicKey{w.rootKey.Public(), w.op.Public()}, Platforms: []string{"linux/amd64"},
		Machines: []string{"runner-1"}, At: []time.Time{now, now.Add(2 * time.Hour)}}
	return w
}

func (w *crashWorld) write(name string, b []byte) {
	if err := os.WriteFile(filepath.Join(w.dir, name), b, 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// batch writes the next batch's records as files, and returns their
// names and bytes.
func (w *crashWorld) batch(n int) ([]string, [][]byte) {
	w.batches++
	b := w.batches
	now := time.Now()
	fresh := testkit.Key(w.t, byte(20+b%200))
	d := testkit.Delegation(fresh, []string{"instruct"}, "demo", "runner-*")
	d.IssuedAt, d.NotBefore, d.NotAfter = now.Unix(), now.Add(-time.Hour).Unix(), now.Add(24*time.Hour).Unix()+int64(b)
	q := &schemas.Quarantine{V: 1, Machine: "runner-1", Until: now.Add(time.Hour).Unix() + int64(b), IssuedAt: now.Unix()}
	p := testkit.Pin("linux/amd64", fmt.Sprintf("sha256:%064x", b), uint64(1000+b))
	p.Version, p.IssuedAt = fmt.Sprintf("v1.%d.0", b), now.Unix()
	recs := [][]byte{testkit.Seal(w.t, d, w.rootKey), testkit.Seal(w.t, q, w.rootKey), testkit.Seal(w.t, p, w.op)}
	for i := range n {
		in := testkit.Instruction(fmt.Sprintf("%016x%016x", b, i))
		in.IssuedAt, in.NotBefore, in.Expires = now.Unix(), now.Unix(), now.Add(time.Hour).Unix()
		recs = append(recs, testkit.Seal(w.t, in, w.op))
	}
	rev := &schemas.Revocation{V: 1, Target: fresh.Public().ID(), Reason: "crash round", IssuedAt: now.Unix()}
	recs = append(recs, testkit.Seal(w.t, rev, w.rootKey))
	var names []string
	for i, r := range recs {
		names = append(names, fmt.Sprintf("b%d-%d.cose", b, i))
		w.write(names[i], r)
		w.u.Targets = append(w.u.Targets, schemas.SHA256Digest(r))
	}
	if len(w.u.Keys) < 40 {
		w.u.Keys = append(w.u.Keys, fresh.Public())
	}
	return names, recs
}

// runKilled runs writ args in w.dir, and SIGKILLs it after delay unless
// it exits first. It returns whether it was killed; a process that
// exits with an error fails t.
func (w *crashWorld) runKilled(delay time.Duration, args ...string) bool {
	cmd := exec.Command("writ", args...)
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase, "GORACE=atexit_sleep_ms=0")
	var stderr bytes.Buffer
	cmd.Stderr, cmd.Stdout = &stderr, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			w.t.Fatalf("writ %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		w.duration = time.Since(start)
		return false
	case <-time.After(delay):
		cmd.Process.Signal(syscall.SIGKILL)
		if err := <-done; err == nil {
			// It exited 0 before the signal landed: acknowledged.
			return false
		}
		return true
	}
}

// killDelay is a random moment from 40% to 110% of the last complete
// run's duration: a process spends most of its life starting, and
// writes at the end.
func (w *crashWorld) killDelay() time.Duration {
	d := max(w.duration, 50*time.Millisecond)
	return d*2/5 + time.Duration(w.rng.Int64N(int64(d*7/10)))
}

// crashFullReplay replays every entry of l, verified under k, into a
// fresh state.
func crashFullReplay(t *testing.T, l *ledger.Log, k *formats.LogKey) (*delegation.State, *verify.StateMarks) {
	st, marks := delegation.NewState(), &verify.StateMarks{}
	_, err := l.Verify(k, func(i int64, e []byte, at time.Time) error {
		a, err := st.Apply(bytes.Clone(e), at)
		if err == nil {
			marks.Applied(a)
		}
		return err
	})
	if err != nil {
		t.Fatalf("full replay: %v", err)
	}
	return st, marks
}

// checkStore checks the authority store at dir after a kill, under k: its
// first entries are acked, in order; the index the kill left matches a
// full replay; the authority loaded for writing (extending the index, or
// replaying and writing it again) and then read-only (extending it)
// answers as the full replay. It returns the stored size and why the
// writing load replayed ("" when it extended the index).
func (w *crashWorld) checkStore(dir string, k *formats.LogKey, acked [][]byte) (int64, string) {
	t := w.t
	l, err := ledger.Open(dir, nil)
	if err != nil {
		t.Fatalf("reopening after SIGKILL: %v", err)
	}
	defer l.Close()
	for i, want := range acked {
		if got, err := l.Entry(int64(i)); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("acknowledged entry %d: %v, stored %x, want %x", i, err, got, want)
		}
	}
	ref, marks := crashFullReplay(t, l, k)
	if err := verify.CheckStateIndex(l, ref, marks.Marks); err != nil {
		t.Fatalf("the index the kill left: %v", err)
	}
	a, err := verify.LoadAuthority(l, k)
	if err != nil {
		t.Fatalf("load after SIGKILL: %v", err)
	}
	if d := statequery.Diff(statequery.Answers(a.State, w.u), statequery.Answers(ref, w.u)); d != "" {
		t.Fatalf("the loaded state differs from the full replay's: %s", d)
	}
	size := l.Size()
	l.Close()
	ro, err := ledger.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ra, err := verify.LoadAuthority(ro, k)
	if err != nil {
		t.Fatalf("read-only load: %v", err)
	}
	if ra.Replayed != "" {
		t.Fatalf("read-only load after the writing one: the index was not used: %s", ra.Replayed)
	}
	if d := statequery.Diff(statequery.Answers(ra.State, w.u), statequery.Answers(ref, w.u)); d != "" {
		t.Fatalf("the read-only loaded state differs from the full replay's: %s", d)
	}
	return size, a.Replayed
}

// storedEntries reads every entry of the store at dir.
func storedEntries(t *testing.T, dir string) [][]byte {
	l, err := ledger.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out [][]byte
	for i := range l.Size() {
		e, err := l.Entry(i)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(e))
	}
	return out
}

// TestStateCrashAppend kills `writ ledger append` at random moments while
// it appends batches of records (each batch one process, several per
// round; every other round starts with the binding deleted, so that its
// first process rewrites the whole index): every batch a process
// acknowledged is stored, the killed one whole or not at all, and the
// index the kill left is consistent.
func TestStateCrashAppend(t *testing.T) {
	w := newCrashWorld(t, "example.com/state-crash")
	store := ledgerdir.Dir(filepath.Join(w.dir, "W")).AuthorityStore()
	acked := storedEntries(t, store)
	var killed, inside, replayed int
	for round := range stateCrashRounds() {
		if round%2 == 1 {
			// No binding: the round's first process replays the whole
			// log and writes the index again, which the kill may cut.
			err := testkit.EditStore(store, func(txn *badger.Txn) error { return txn.Delete([]byte("m/state")) })
			if err != nil {
				t.Fatal(err)
			}
		}
		var lost [][]byte
		for run := 0; run < 6 && lost == nil; run++ {
			names, recs := w.batch(2 + w.rng.IntN(4))
			if w.runKilled(w.killDelay(), append([]string{"ledger", "append", "--dir", "W"}, names...)...) {
				lost, killed = recs, killed+1
			} else {
				acked = append(acked, recs...)
			}
		}
		size, why := w.checkStore(store, w.vkey, acked)
		switch stored := storedEntries(t, store); {
		case size == int64(len(acked)):
		case size == int64(len(acked)+len(lost)) && slicesEqual(stored[len(acked):], lost):
			acked, inside = stored, inside+1 // killed after its commit
		default:
			t.Fatalf("round %d: %d entries stored: %d acknowledged, and the killed batch of %d stored in part", round, size, len(acked), len(lost))
		}
		if why != "" {
			replayed++
		}
		t.Logf("round %d: %d entries acknowledged, %d stored; the load replayed: %q", round, len(acked), size, why)
	}
	fmt.Printf("state crash: ledger append: %d rounds, %d killed, %d after their commit, %d loads replayed, acknowledged entries lost: 0\n",
		stateCrashRounds(), killed, inside, replayed)
}

func slicesEqual(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// publishBatches appends batches batches of 60 instructions (and the
// authority records around them) to the writer's ledger W, publishes it
// to P, and returns every entry it holds.
func (w *crashWorld) publishBatches(batches int) [][]byte {
	t := w.t
	wdir := ledgerdir.Dir(filepath.Join(w.dir, "W"))
	id, err := sign.ScryptIdentity([]byte(floodPassphrase))
	if err != nil {
		t.Fatal(err)
	}
	unlock := ledgerdir.Unlock{Identities: func() ([]age.Identity, error) { return []age.Identity{id}, nil }}
	for range batches {
		_, recs := w.batch(60)
		a, _, err := verify.AppendRecords(wdir, recs, unlock)
		if err != nil {
			t.Fatal(err)
		}
		a.Log.Close()
	}
	writIn(t, w.dir, "ledger", "publish", "--dir", "W", "--to", "P")
	return storedEntries(t, wdir.AuthorityStore())
}

// TestStateCrashSync kills `writ ledger sync` at random moments while it
// syncs a replica from a publication the writer grows each round: the
// entries of every sync that exited 0 are stored, every stored entry is
// the writer's, the index the kill left is consistent (entries stored
// past the binding are extended by the next load), and a last sync run
// to the end leaves a replica whose index the next load extends.
func TestStateCrashSync(t *testing.T) {
	w := newCrashWorld(t, "example.com/state-crash-sync")
	grow := w.publishBatches
	published := grow(2)
	vkey := strings.TrimSpace(writIn(t, w.dir, "ledger", "vkey", "--dir", "W"))
	if w.runKilled(time.Hour, "ledger", "sync", "--dir", "R", "--from", "P", "--vkey", vkey) {
		t.Fatal("the first sync was killed")
	}
	rstore := ledgerdir.Dir(filepath.Join(w.dir, "R")).AuthorityStore()
	acked, prev := len(published), int64(len(published))
	var killed, tail int
	for round := range stateCrashRounds() {
		published = grow(3)
		if w.runKilled(w.killDelay(), "ledger", "sync", "--dir", "R", "--from", "P") {
			killed++
		} else {
			acked = len(published)
		}
		if b, size, ok := bindingOf(t, rstore); ok && b < size {
			tail++ // entries stored past the binding: the load extends them
		}
		size, why := w.checkStore(rstore, w.vkey, published[:acked])
		if !slicesEqual(storedEntries(t, rstore), published[:size]) {
			t.Fatalf("round %d: the replica's %d entries are not the writer's first %d", round, size, size)
		}
		if size == prev {
			w.duration = w.duration * 3 / 2 // killed before it stored anything: later next time
		}
		prev = size
		t.Logf("round %d: %d of %d entries acknowledged, %d stored; the load replayed: %q", round, acked, len(published), size, why)
	}
	if w.runKilled(time.Hour, "ledger", "sync", "--dir", "R", "--from", "P") {
		t.Fatal("the last sync was killed")
	}
	size, why := w.checkStore(rstore, w.vkey, published)
	if size != int64(len(published)) || why != "" {
		t.Fatalf("after the last sync: %d entries of %d, the load replayed: %q", size, len(published), why)
	}
	fmt.Printf("state crash: ledger sync: %d rounds, %d killed, %d left entries past the binding, acknowledged entries lost: 0\n",
		stateCrashRounds(), killed, tail)
}

// bindingOf opens the store at dir for writing (which recovers what a
// killed writer left; a read-only open refuses some of it, see
// LIMITATIONS.md) and returns the size its binding covers, the log's
// size, and whether it has a binding.
func bindingOf(t *testing.T, dir string) (int64, int64, bool) {
	l, err := ledger.Open(dir, nil)
	if err != nil {
		var se *ledger.StoreError
		if errors.As(err, &se) {
			keep := filepath.Join(os.TempDir(), "writ-statecrash-damaged")
			os.RemoveAll(keep)
			exec.Command("cp", "-a", dir, keep).Run()
			t.Fatalf("reopening after SIGKILL: %v (cause: %v; the store is copied to %s)", err, se.Cause, keep)
		}
		t.Fatalf("reopening after SIGKILL: %v", err)
	}
	defer l.Close()
	b, ok, err := stateview.NewIndex(l).Binding()
	if err != nil {
		t.Fatal(err)
	}
	return b.Size, l.Size(), ok
}
