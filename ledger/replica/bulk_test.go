package replica_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/internal/badgerfile"
	"github.com/writ-ledger/writ/ledger/replica"
)

// storeDump returns every key and value of the Badger store at dir, in
// key order, as "key=value" lines (hex).
func storeDump(t *testing.T, dir string) []string {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dir).WithReadOnly(true).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []string
	err = db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("%x=%x", it.Item().Key(), v))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBulkFirstSyncMatchesIncremental: a new replica's first sync writes
// its entries, tree hashes and history checkpoints by bulk load
// (ledger.Log.NewBulkReplicaWriter), beside the replica until it
// finishes; a replica that grew from one entry through transactions holds
// exactly the same keys and values, and both verify. The bulk-loaded one
// takes transactions after it (a later sync), and nothing is left beside
// it.
func TestBulkFirstSyncMatchesIncremental(t *testing.T) {
	w, out := publishedWriter(t, 1)
	steps := filepath.Join(t.TempDir(), "steps")
	if _, err := syncDir(t, steps, out, w.VerifierKey()); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{3, 250, 2, 300, 1, 256, 600, 7} {
		w.add(t, n)
	}
	w.publish(t, out)
	if _, err := syncDir(t, steps, out, w.VerifierKey()); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(t.TempDir(), "first")
	s, err := syncDir(t, first, out, w.VerifierKey())
	if err != nil || s.Before != 0 || s.After != w.Size() {
		t.Fatalf("first sync: %+v, %v; want 0 to %d", s, err, w.Size())
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(first), ".first.new")); !os.IsNotExist(err) {
		t.Fatalf("the directory the first sync wrote in is still there (stat: %v)", err)
	}
	for round := range 2 {
		a, b := storeDump(t, steps), storeDump(t, first)
		if len(a) != len(b) {
			t.Fatalf("round %d: %d keys synced in steps, %d by the first sync", round, len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("round %d: key %d differs:\n steps: %.120s\n first: %.120s", round, i, a[i], b[i])
			}
		}
		wcp, _ := w.SignedHead()
		for _, dir := range []string{steps, first} {
			if cp, times := acceptedTimes(t, dir); cp != wcp || int64(len(times)) != w.Size() {
				t.Fatalf("round %d: %s verifies to %+v with %d entries, want %+v", round, dir, cp, len(times), wcp)
			}
		}
		w.add(t, 5)
		w.publish(t, out)
		for _, dir := range []string{steps, first} {
			if _, err := syncDir(t, dir, out, w.VerifierKey()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// publishedWriter returns a history writer that appended one batch of
// each size in batches, and the directory it published them to.
func publishedWriter(t *testing.T, batches ...int) (*historyWriter, string) {
	t.Helper()
	w := newHistoryWriter(t)
	for _, n := range batches {
		w.add(t, n)
	}
	out := filepath.Join(t.TempDir(), "pub")
	w.publish(t, out)
	return w, out
}

// exportTo writes an export of w's log (its authority section) to a
// file and returns its path.
func exportTo(t *testing.T, w *historyWriter) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "export")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := replica.Export(f, []string{"authority"}, []*ledger.Log{w.Log}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBulkImportMatchesIncremental: an import into a new directory
// bulk-loads the log beside its place and renames it in; a replica that
// imported a prefix first and then the rest through transactions holds
// exactly the same keys and values, and both verify.
func TestBulkImportMatchesIncremental(t *testing.T) {
	w := newHistoryWriter(t)
	w.add(t, 3)
	prefix := exportTo(t, w)
	for _, n := range []int{250, 2, 300, 1, 256, 7} {
		w.add(t, n)
	}
	full := exportTo(t, w)
	steps, fresh := filepath.Join(t.TempDir(), "steps"), filepath.Join(t.TempDir(), "fresh")
	for _, path := range []string{prefix, full} {
		if _, err := replica.Import(steps, path, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := replica.Import(fresh, full, nil, nil)
	if err != nil || len(got) != 1 || got[0].Before != 0 || got[0].After != w.Size() {
		t.Fatalf("import into a new directory: %+v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(fresh, ".authority.new")); !os.IsNotExist(err) {
		t.Fatalf("the directory the import wrote in is still there (stat: %v)", err)
	}
	a, b := storeDump(t, filepath.Join(steps, "authority")), storeDump(t, filepath.Join(fresh, "authority"))
	if len(a) != len(b) {
		t.Fatalf("%d keys imported in steps, %d imported at once", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("key %d differs:\n steps: %.120s\n fresh: %.120s", i, a[i], b[i])
		}
	}
	wcp, _ := w.SignedHead()
	for _, dir := range []string{steps, fresh} {
		if cp, times := acceptedTimes(t, filepath.Join(dir, "authority")); cp != wcp || int64(len(times)) != w.Size() {
			t.Fatalf("%s verifies to %+v with %d entries, want %+v", dir, cp, len(times), wcp)
		}
	}
}

// TestFirstSyncBusy: a first sync that finds another one writing the new
// replica beside its place (holding the lock beside it, .NAME.new.lock)
// refuses with ledger.ErrLocked and leaves its directory alone; once that
// one is gone, what it left is removed and the sync runs to the end.
func TestFirstSyncBusy(t *testing.T) {
	w, out := publishedWriter(t, 300)
	rdir := filepath.Join(t.TempDir(), "replica")
	beside := filepath.Join(filepath.Dir(rdir), ".replica.new")
	other, err := ledger.CreateReplica(beside, "example.com/tiles", w.VerifierKey(), true)
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	lock, err := os.OpenFile(beside+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := syncDir(t, rdir, out, w.VerifierKey()); !errors.Is(err, ledger.ErrLocked) {
		t.Fatalf("a first sync beside a live one: %v, want ledger.ErrLocked", err)
	}
	if _, err := os.Stat(filepath.Join(beside, "MANIFEST")); err != nil {
		t.Fatalf("the live one's directory was touched: %v", err)
	}
	lock.Close()
	if s, err := syncDir(t, rdir, out, w.VerifierKey()); err != nil || s.After != w.Size() {
		t.Fatalf("after the other one stopped: %+v, %v", s, err)
	}
	for _, left := range []string{beside, beside + ".lock"} {
		if _, err := os.Stat(left); !os.IsNotExist(err) {
			t.Fatalf("%s is still there after the sync (stat: %v)", left, err)
		}
	}
}

// TestFailedFirstSyncLeavesNothing: a first sync refused (here: an entry
// bundle changed after publication) leaves nothing where the
// replica would be, not even its lock, so the directory can still be
// made a writer's ledger (`ledger init` wants it empty); a path with a
// trailing slash places the replica at the same path.
func TestFailedFirstSyncLeavesNothing(t *testing.T) {
	w, out := publishedWriter(t, 10)
	bundle := filepath.Join(out, "tile", "entries", "000.p", "10")
	good, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(good)
	bad[len(bad)-1] ^= 1
	if err := os.WriteFile(bundle, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(t.TempDir(), "ledger")
	var se *replica.SourceError
	if _, err := syncDir(t, filepath.Join(parent, "authority"), out, w.VerifierKey()); !errors.As(err, &se) {
		t.Fatalf("a first sync from a changed bundle: %v, want a *replica.SourceError", err)
	}
	if err := os.WriteFile(bundle, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Fatalf("a refused first sync left %v", left)
	}
	if s, err := syncDir(t, filepath.Join(parent, "authority")+"/", out, w.VerifierKey()); err != nil || s.After != w.Size() {
		t.Fatalf("a first sync to a path with a trailing slash: %+v, %v", s, err)
	}
	if left, _ := os.ReadDir(parent); len(left) != 1 || left[0].Name() != "authority" {
		t.Fatalf("after a first sync the ledger directory holds %v, want only authority", left)
	}
}

// TestFirstSyncRemovesAnyLeftover: whatever a stopped writer, or anyone,
// left at .NAME.new (a file, a FIFO, a link to a directory) is removed,
// never opened or followed, and the first sync runs to the end.
func TestFirstSyncRemovesAnyLeftover(t *testing.T) {
	w, out := publishedWriter(t, 10)
	keep := t.TempDir()
	if err := os.WriteFile(filepath.Join(keep, "precious"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, make := range map[string]func(string) error{
		"file": func(p string) error { return os.WriteFile(p, []byte("junk"), 0o600) },
		"fifo": func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"link": func(p string) error { return os.Symlink(keep, p) },
	} {
		rdir := filepath.Join(t.TempDir(), "replica")
		if err := make(filepath.Join(filepath.Dir(rdir), ".replica.new")); err != nil {
			t.Fatal(err)
		}
		if s, err := syncDir(t, rdir, out, w.VerifierKey()); err != nil || s.After != w.Size() {
			t.Fatalf("%s left beside: %+v, %v", name, s, err)
		}
	}
	if _, err := os.Stat(filepath.Join(keep, "precious")); err != nil {
		t.Fatalf("the link's target lost its content: %v", err)
	}
}

// TestConcurrentFirstSyncs: two first syncs of the same new replica at
// once: each ends in the whole replica or refuses with ledger.ErrLocked,
// and the replica in place holds every entry (a hostile review made the
// earlier lock, Badger's on the directory being written, fail: released
// before the rename, it let the second remove the first's directory as
// the first renamed it into place, emptied).
func TestConcurrentFirstSyncs(t *testing.T) {
	w, out := publishedWriter(t, 250, 250, 250, 250, 250, 250, 250, 250)
	for round := range 10 {
		rdir := filepath.Join(t.TempDir(), "replica")
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				_, err := syncDir(t, rdir, out, w.VerifierKey())
				errs <- err
			}()
		}
		for range 2 {
			if err := <-errs; err != nil && !errors.Is(err, ledger.ErrLocked) {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if cp, times := acceptedTimes(t, rdir); cp.Size != w.Size() || int64(len(times)) != w.Size() {
			t.Fatalf("round %d: the replica in place verifies to %d entries, want %d", round, cp.Size, w.Size())
		}
	}
}

// TestSyncIndexBulkSeen: SyncOptions.Index is called once for a new
// replica, before its load is flushed, and what it puts with
// ReplicaWriter.BulkSeen is stored with the entries; keys out of order,
// or pointing past the entries, refuse the sync and leave no replica; a
// replica that grows is not bulk-loaded, so Index is not called.
func TestSyncIndexBulkSeen(t *testing.T) {
	w, out := publishedWriter(t, 5)
	key := func(b byte) [32]byte { return [32]byte{b} }
	cases := []struct {
		name string
		keys map[byte]int64 // content key's first byte → index, put in the order of keyOrder
		want error
		past bool
	}{
		{name: "sorted", keys: map[byte]int64{1: 0, 2: 4, 9: 2}},
		{name: "out of order", keys: map[byte]int64{9: 2, 1: 0}, want: badgerfile.ErrBulkOrder},
		{name: "past the entries", keys: map[byte]int64{1: 100}, past: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "r")
			calls := 0
			opts := replica.SyncOptions{VKey: testLogKey(t, w.VerifierKey()), History: true}
			opts.Index = func(rw *ledger.ReplicaWriter) error {
				calls++
				ok, err := rw.BulkSeen(func(yield func([32]byte, int64) bool) {
					for _, b := range keyOrder(c.name) {
						if i, in := c.keys[b]; in && !yield(key(b), i) {
							return
						}
					}
				})
				if err == nil && !ok {
					t.Error("BulkSeen on a new replica's writer loaded nothing")
				}
				return err
			}
			_, err := replica.Sync(t.Context(), dir, openDirSource(t, out), opts)
			if calls != 1 {
				t.Fatalf("Index called %d times, want 1", calls)
			}
			if c.want == nil && !c.past {
				if err != nil {
					t.Fatal(err)
				}
				dump := strings.Join(storeDump(t, dir), "\n")
				for b, i := range c.keys {
					if kv := fmt.Sprintf("%x=%016x", ledger.StateSeenKey(key(b)), i); !strings.Contains(dump, kv) {
						t.Errorf("the replica lacks %s", kv)
					}
				}
				w.add(t, 2)
				w.publish(t, out)
				opts.Index = func(*ledger.ReplicaWriter) error { t.Error("Index called for a replica that grows"); return nil }
				if _, err := replica.Sync(t.Context(), dir, openDirSource(t, out), opts); err != nil {
					t.Fatal(err)
				}
				return
			}
			t.Logf("refused: %v", err)
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) || (c.past && !strings.Contains(err.Error(), "content key of entry 100, past the")) {
				t.Fatalf("got %v, want a refusal (%v)", err, c.want)
			}
			if ents, _ := os.ReadDir(filepath.Dir(dir)); len(ents) != 0 {
				t.Fatalf("a refused first sync left %d files (%s...)", len(ents), ents[0].Name())
			}
		})
	}
}

// keyOrder is the order TestSyncIndexBulkSeen puts its keys in.
func keyOrder(name string) []byte {
	if name == "out of order" {
		return []byte{9, 1}
	}
	return []byte{1, 2, 9}
}
