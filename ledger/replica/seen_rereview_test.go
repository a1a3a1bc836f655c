package replica

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Re-review of the sync's proof of the witnesses' views (seen.go): attacks
// the sync withstands (a huge tree size and a tampered replica since
// their fixes).

// rereviewSetup: a writer of 8 entries (batches of 4), published, a
// replica synced to it, and the checkpoint of a fork of size 4 under the
// same key.
func rereviewSetup(t *testing.T) (pub, replica string, synced Synced, forked4 []byte, vkey string) {
	t.Helper()
	t0 := time.Unix(1_700_000_000, 0)
	w := newClockLog(t, filepath.Join(t.TempDir(), "w"), t0)
	defer w.Close()
	w.appendAt(t, t0.Add(time.Second), "a", "b", "c", "d")
	w.appendAt(t, t0.Add(2*time.Second), "e", "f", "g", "h")
	vkey = w.VerifierKey()
	pub = filepath.Join(t.TempDir(), "pub")
	if _, err := publish.Publish(w.Log, pub); err != nil {
		t.Fatal(err)
	}
	f := newClockLog(t, filepath.Join(t.TempDir(), "f"), t0)
	defer f.Close()
	f.appendAt(t, t0.Add(time.Second), "A", "B", "C", "D")
	forked4, err := f.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	replica = filepath.Join(t.TempDir(), "replica")
	synced, err = Sync(context.Background(), replica, mustSource(t, pub), SyncOptions{VKey: testLogKey(t, vkey), History: true})
	if err != nil || synced.After != 8 {
		t.Fatalf("first sync: %+v %v", synced, err)
	}
	return pub, replica, synced, forked4, vkey
}

func mustSource(t *testing.T, dir string) tiles.Source {
	t.Helper()
	src, err := tiles.OpenSource(dir, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// REGRESSION, once an attack (wrong yes, split view accepted; low: needs write access to the
// replica's store): a view smaller than the replica is judged by
// l.ProveConsistency, whose OldRoot is read from the replica's stored
// hashes and whose NewRoot is never compared with the replica's signed
// checkpoint (seen.go decide, case cp.Size <= s.local.Size). One stored
// interior hash (level 2, index 0: the root of the first 4 entries,
// which the replica's checkpoint of size 8 does not read directly) set
// to the fork's root makes a fork of size 4 "consistent". Neither the
// Verified short-circuit nor the same-size (refresh) path verifies the
// replica first, so the sync succeeds with the split view reported as
// proven (SeenResult.Err nil).
func TestRereviewSeenTamperedReplicaHidesSplitView(t *testing.T) {
	pub, replica, synced, forked4, vkey := rereviewSetup(t)
	fc, err := formats.OpenCheckpoint(forked4, testLogKey(t, vkey))
	if err != nil {
		t.Fatal(err)
	}
	db, err := badger.Open(badger.DefaultOptions(filepath.Join(replica)).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(txn *badger.Txn) error {
		return txn.Set(indexKey(prefixHash, tlog.StoredHashIndex(2, 0)), fc.Hash[:])
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	seen := func([]byte, *formats.LogKey) []SeenCheckpoint {
		return []SeenCheckpoint{{Source: "witness forked", Signed: forked4}}
	}
	for _, c := range []struct {
		name     string
		verified []byte
	}{{"Verified short-circuit", synced.Signed}, {"same size (refresh path)", nil}} {
		res, err := Sync(context.Background(), replica, mustSource(t, pub), SyncOptions{VKey: testLogKey(t, vkey), History: true, Verified: c.verified, Seen: seen})
		var sv *SplitViewError
		if errors.As(err, &sv) {
			continue
		}
		if err == nil && len(res.Seen) == 1 && res.Seen[0].Err == nil {
			t.Errorf("%s: a fork of size 4 (root %s) is reported consistent with the published size 8: the proof used the replica's tampered hash, never checked against its signed root", c.name, hexHash(fc.Hash))
		}
	}
}

// hugeView signs, with the log's key (key 1, "example.com/hist"), a
// checkpoint of the given size.
func hugeView(t *testing.T, size int64) []byte {
	t.Helper()
	s, _, err := formats.NewNoteSigner("example.com/hist", testkit.Key(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	var h tlog.Hash
	h[0] = 1
	text := formats.Checkpoint{Origin: "example.com/hist", Size: size, Hash: h}.Body()
	b, err := note.Sign(&note.Note{Text: text}, s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// REGRESSION, once an attack (DoS, unbounded CPU; medium): a view larger than the published
// tree goes to provenFromTiles, which calls tlog.ProveTree(cp.Size, ...).
// For a size above 2^62, tlog's maxpow2 never ends (1<<63 and then 0 are
// always "< n"): the sync spins one CPU forever, before any tile is read,
// deaf to its context (--timeout). The log key's holder — the adversary
// the witness check is for — gets any witness that has not yet seen the
// log (old size 0, no proof checked) to cosign and serve such a
// checkpoint, and every replica under the policy hangs instead of
// reporting the view undecided. The Verified short-circuit hangs alike.
func TestRereviewSeenHugeSizeHangs(t *testing.T) {
	for _, c := range []struct {
		name     string
		verified bool
		size     int64
	}{
		{"2^63-1, nothing new (Verified)", true, 1<<63 - 1},
		{"2^62+1, same size path", false, 1<<62 + 1},
	} {
		pub, replica, synced, _, vkey := rereviewSetup(t)
		var verified []byte
		if c.verified {
			verified = synced.Signed
		}
		view := hugeView(t, c.size)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		done := make(chan error, 1)
		go func() {
			_, err := Sync(ctx, replica, mustSource(t, pub), SyncOptions{VKey: testLogKey(t, vkey), History: true, Verified: verified,
				Seen: func([]byte, *formats.LogKey) []SeenCheckpoint {
					return []SeenCheckpoint{{Source: "witness w", Signed: view}}
				}})
			done <- err
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: a view of size %d signed by the log key: Sync has not returned 9s after its 1s context ended (tlog.ProveTree loops forever above 2^62)", c.name, c.size)
		}
		cancel()
	}
}

// REGRESSION: a view of size 0 with another root is a split view; one
// with the empty root is consistent; a view that is not signed by the
// log's key (here: by another key under the log's origin) and one of
// another origin are reported, not refusals, and not "proven".
func TestRereviewSeenOddViews(t *testing.T) {
	pub, replica, synced, _, vkey := rereviewSetup(t)
	sign := func(origin string, seed byte, size int64, h tlog.Hash) []byte {
		s, _, err := formats.NewNoteSigner(origin, testkit.Key(t, seed))
		if err != nil {
			t.Fatal(err)
		}
		b, err := note.Sign(&note.Note{Text: formats.Checkpoint{Origin: origin, Size: size, Hash: h}.Body()}, s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var bad tlog.Hash
	bad[0] = 7
	for _, verified := range [][]byte{nil, synced.Signed} {
		do := func(v []byte) (Synced, error) {
			return Sync(context.Background(), replica, mustSource(t, pub), SyncOptions{VKey: testLogKey(t, vkey), History: true, Verified: verified,
				Seen: func([]byte, *formats.LogKey) []SeenCheckpoint {
					return []SeenCheckpoint{{Source: "witness w", Signed: v}}
				}})
		}
		var sv *SplitViewError
		if _, err := do(sign("example.com/hist", 1, 0, bad)); !errors.As(err, &sv) {
			t.Errorf("verified=%v: an empty tree with another root: %v", verified != nil, err)
		}
		if res, err := do(sign("example.com/hist", 1, 0, emptyRoot)); err != nil || res.Seen[0].Err != nil {
			t.Errorf("verified=%v: the empty tree: %+v %v", verified != nil, res.Seen, err)
		}
		for _, v := range [][]byte{sign("example.com/hist", 2, 4, bad), sign("example.com/other", 1, 4, bad)} {
			res, err := do(v)
			if err != nil || len(res.Seen) != 1 || res.Seen[0].Err == nil || res.Seen[0].Size != -1 {
				t.Errorf("verified=%v: a view not of this log's key: %+v %v", verified != nil, res.Seen, err)
			}
		}
	}
}

// REGRESSION: a split view between the replica's size and the published
// one is refused after the entries were fetched but before the commit:
// the replica is left at its size, and a later sync without the view
// succeeds from there.
func TestRereviewSeenDeferredLeavesNothing(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	w := newClockLog(t, filepath.Join(t.TempDir(), "w"), t0)
	defer w.Close()
	f := newClockLog(t, filepath.Join(t.TempDir(), "f"), t0)
	defer f.Close()
	pub0 := filepath.Join(t.TempDir(), "pub0")
	for i := range 4 {
		var es []string
		for j := range 300 {
			es = append(es, fmt.Sprintf("e%d-%d-%s", i, j, strings.Repeat("x", 1000)))
		}
		w.appendAt(t, t0.Add(time.Duration(i+1)*time.Second), es...)
		if i == 0 {
			if _, err := publish.Publish(w.Log, pub0); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.appendAt(t, t0.Add(time.Second), "x")
	var es []string
	for j := range 700 {
		es = append(es, fmt.Sprintf("f-%d", j))
	}
	f.appendAt(t, t0.Add(2*time.Second), es...)
	forked, _ := f.Checkpoint() // size 701, between 300 and 1200
	vkey := w.VerifierKey()
	pub := filepath.Join(t.TempDir(), "pub")
	if _, err := publish.Publish(w.Log, pub); err != nil {
		t.Fatal(err)
	}
	replica := filepath.Join(t.TempDir(), "replica")
	if _, err := Sync(context.Background(), replica, mustSource(t, pub0), SyncOptions{VKey: testLogKey(t, vkey), History: true}); err != nil {
		t.Fatal(err)
	}
	_, err := Sync(context.Background(), replica, mustSource(t, pub), SyncOptions{VKey: testLogKey(t, vkey), History: true,
		Seen: func([]byte, *formats.LogKey) []SeenCheckpoint {
			return []SeenCheckpoint{{Source: "witness f", Signed: forked}}
		}})
	var sv *SplitViewError
	if !errors.As(err, &sv) {
		t.Fatalf("a fork of size 701 between 300 and 1200: %v", err)
	}
	l, err := ledger.OpenReadOnly(replica)
	if err != nil {
		t.Fatal(err)
	}
	if l.Size() != 300 {
		t.Errorf("after the refusal the replica holds %d entries, want 300", l.Size())
	}
	if _, err := l.Verify(testLogKey(t, vkey), nil); err != nil {
		t.Errorf("after the refusal the replica does not verify: %v", err)
	}
	l.Close()
	if res, err := Sync(context.Background(), replica, mustSource(t, pub), SyncOptions{VKey: testLogKey(t, vkey), History: true}); err != nil || res.After != 1200 {
		t.Fatalf("the next sync: %+v %v", res, err)
	}
}
