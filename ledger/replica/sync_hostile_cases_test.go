package replica_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// otherWriter is a log of origin example.com/tiles under testkit.Key(t,
// key) whose entries start at "entry <first>", with the given batches.
func otherWriter(t *testing.T, key byte, first int, batches ...int) *historyWriter {
	t.Helper()
	w := &historyWriter{dir: filepath.Join(t.TempDir(), "other"), now: time.Unix(1_700_000_000, 0), next: first}
	l, err := ledger.CreateWithHistory(w.dir, "example.com/tiles", testkit.Key(t, key), func() time.Time { return w.now })
	if err != nil {
		t.Fatal(err)
	}
	w.Log = l
	t.Cleanup(func() { w.Close() })
	for _, n := range batches {
		w.add(t, n)
	}
	return w
}

func (w *historyWriter) published(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "other-pub")
	w.publish(t, dir)
	return dir
}

func (w *historyWriter) signed(t *testing.T) []byte {
	t.Helper()
	b, err := w.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// flipByte changes byte i of a file.
func flipByte(i int) func([]byte) []byte {
	return func(b []byte) []byte { b[i] ^= 1; return b }
}

// otherBundle is a well-formed bundle of n entries that are not the log's.
func otherBundle(t *testing.T, n int) []byte {
	var e [][]byte
	for i := range n {
		e = append(e, []byte("not an entry of the log "+strings.Repeat("x", i)))
	}
	return encodeBundle(t, e)
}

func TestSyncHostileBundles(t *testing.T) {
	h := newHostile(t)
	for _, c := range []hostileCase{
		{name: "forged new entry", fresh: true, check: wantSource(newEntries, "do not hash to the signed history checkpoint of size 300"),
			source: func(t *testing.T, h *hostile) tiles.Source {
				return openDirSource(t, h.altered(t, newEntries, flipByte(2)))
			}},
		{name: "forged entry the replica holds", fresh: true, check: wantSource(oldEntries, "entry"),
			source: func(t *testing.T, h *hostile) tiles.Source {
				return openDirSource(t, h.altered(t, oldEntries, flipByte(30)))
			}},
		{name: "truncated entry", fresh: true, check: wantSource(newEntries, "declared"),
			source: func(t *testing.T, h *hostile) tiles.Source {
				return openDirSource(t, h.altered(t, newEntries, func(b []byte) []byte { return b[:len(b)-1] }))
			}},
		{name: "truncated length", fresh: true, check: wantSource(newEntries, "truncated length"),
			source: func(t *testing.T, h *hostile) tiles.Source {
				return openDirSource(t, h.altered(t, newEntries, func(b []byte) []byte {
					e, _ := tiles.ParseBundle(b, 54)
					return b[:len(b)-len(e[53])-1]
				}))
			}},
		{name: "an entry too many", fresh: true, check: wantSource(newEntries, "after entry 53"),
			source: func(t *testing.T, h *hostile) tiles.Source {
				return openDirSource(t, h.altered(t, newEntries, func(b []byte) []byte { return append(b, 0, 1, 'x') }))
			}},
		{name: "other entries, new tile", fresh: true, check: wantSource(newEntries, "root"),
			source: func(t *testing.T, h *hostile) tiles.Source {
				return openDirSource(t, h.altered(t, newEntries, func([]byte) []byte { return otherBundle(t, 54) }))
			}},
		{name: "other entries, full tile", fresh: true, check: wantSource(oldEntries, "root"),
			source: func(t *testing.T, h *hostile) tiles.Source {
				return openDirSource(t, h.altered(t, oldEntries, func([]byte) []byte { return otherBundle(t, 256) }))
			}},
		{name: "garbage hash tiles are never trusted", check: wantOK,
			source: func(t *testing.T, h *hostile) tiles.Source {
				return openDirSource(t, garbageHashTiles(t, h.copyPub(t)))
			}},
		{name: "forged entry and garbage hash tiles", fresh: true, check: wantSource(newEntries, "no consistency proof"),
			source: func(t *testing.T, h *hostile) tiles.Source {
				return openDirSource(t, garbageHashTiles(t, h.altered(t, newEntries, flipByte(2))))
			}},
		{name: "missing bundle", fresh: true, check: wantIs(tiles.ErrNotPublished, newEntries),
			source: func(t *testing.T, h *hostile) tiles.Source {
				dir := h.copyPub(t)
				os.Remove(filepath.Join(dir, newEntries))
				return openDirSource(t, dir)
			}},
	} {
		h.run(t, c)
	}
}

// garbageHashTiles overwrites every hash tile under dir with bytes of
// the same length, or a few bytes, that are no hashes of the log.
func garbageHashTiles(t *testing.T, dir string) string {
	t.Helper()
	for i, p := range []string{"tile/0/000", "tile/0/001.p/54", "tile/1/000.p/1"} {
		name := filepath.Join(dir, p)
		g := bytes.Repeat([]byte{0xa5}, len(readFileT(t, name)))
		if i == 2 {
			g = g[:3]
		}
		if err := os.WriteFile(name, g, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSyncHostileCheckpoints(t *testing.T) {
	h := newHostile(t)
	dirOf := func(dir string) func(*testing.T, *hostile) tiles.Source {
		return func(t *testing.T, _ *hostile) tiles.Source { return openDirSource(t, dir) }
	}
	for _, c := range []hostileCase{
		{name: "another key, same origin", fresh: true, check: wantIs(formats.ErrCheckpointSignature),
			source: dirOf(otherWriter(t, 2, 0, 100, 200, 5, 5).published(t))},
		{name: "checkpoint altered", fresh: true, check: wantIs(formats.ErrCheckpointSignature),
			source: func(t *testing.T, h *hostile) tiles.Source {
				return openDirSource(t, h.altered(t, "checkpoint", func(b []byte) []byte { return bytes.Replace(b, []byte("\n310\n"), []byte("\n311\n"), 1) }))
			}},
		{name: "older checkpoint", check: wantOlder,
			prepare: func(t *testing.T, h *hostile, rdir string) {
				if _, err := syncDir(t, rdir, h.pub, h.w.VerifierKey()); err != nil {
					t.Fatal(err)
				}
			},
			source: func(t *testing.T, h *hostile) tiles.Source {
				return openDirSource(t, h.altered(t, "checkpoint", func([]byte) []byte { return h.oldCP }))
			}},
		{name: "fork of the same size", check: wantInconsistent("same size with another root", false),
			source: dirOf(otherWriter(t, 1, 1000, 100).published(t))},
		{name: "larger fork", check: wantInconsistent("consistency proof from its hash tiles fails", true),
			source: dirOf(otherWriter(t, 1, 1000, 100, 200, 5, 5).published(t))},
		{name: "larger fork sharing a prefix", check: wantInconsistent("consistency proof from its hash tiles fails", true),
			source: dirOf(prefixFork(t).published(t))},
		{name: "the same entries, another history", check: wantInconsistent("another history", false),
			source: dirOf(otherWriter(t, 1, 0, 50, 260).published(t))},
		{name: "smaller fork", check: wantInconsistent("not a prefix", true),
			source: dirOf(otherWriter(t, 1, 1000, 50).published(t))},
	} {
		h.run(t, c)
	}
}

func TestSyncHostileHistory(t *testing.T) {
	h := newHostile(t)
	old, err := tiles.ParseBundle(readFileT(t, filepath.Join(h.pub, oldHistory)), -1)
	if err != nil || len(old) != 1 {
		t.Fatalf("%s: %d checkpoints, %v", oldHistory, len(old), err)
	}
	last := h.w.signed(t)
	fork305 := otherWriter(t, 1, 1000, 300, 5).signed(t)
	other305 := otherWriter(t, 2, 0, 100, 200, 5).signed(t)
	fork100 := otherWriter(t, 1, 1000, 100).signed(t)
	history := func(path string, edit func([][]byte) [][]byte) func(*testing.T, *hostile) tiles.Source {
		return func(t *testing.T, h *hostile) tiles.Source { return openDirSource(t, h.editHistory(t, path, edit)) }
	}
	errHistory := ledger.ErrHistory.Error()
	for _, c := range []hostileCase{
		{name: "last checkpoint removed", fresh: true, check: wantSource(newHistory, errHistory, "no history checkpoint covers"),
			source: history(newHistory, func(c [][]byte) [][]byte { return c[:2] })},
		{name: "checkpoints reordered", fresh: true, check: wantSource(newHistory, errHistory, "out of order"),
			source: history(newHistory, func(c [][]byte) [][]byte { return [][]byte{c[1], c[0], c[2]} })},
		{name: "checkpoint of an earlier tile", fresh: true, check: wantSource(newHistory, errHistory, "outside the tile"),
			source: history(newHistory, func(c [][]byte) [][]byte { return append([][]byte{old[0]}, c...) })},
		{name: "checkpoint of a later tile", fresh: true, check: wantSource(oldHistory, errHistory, "outside the tile"),
			source: history(oldHistory, func(c [][]byte) [][]byte { return append(c, last) })},
		{name: "checkpoint of another tree of the size", fresh: true, check: wantSource(newEntries, "history checkpoint of size 305"),
			source: history(newHistory, func(c [][]byte) [][]byte { c[1] = fork305; return c })},
		{name: "checkpoint by another key", fresh: true, check: wantSource(newHistory, errHistory),
			source: history(newHistory, func(c [][]byte) [][]byte { c[1] = other305; return c })},
		{name: "another checkpoint of a size the replica holds", check: wantInconsistent("another history", false),
			source: history(oldHistory, func([][]byte) [][]byte { return [][]byte{fork100} })},
		{name: "empty bundle", fresh: true, check: wantSource(newHistory, errHistory, "no history checkpoint covers"),
			source: func(t *testing.T, h *hostile) tiles.Source {
				return openDirSource(t, h.altered(t, newHistory, func([]byte) []byte { return nil }))
			}},
		{name: "malformed bundle", fresh: true, check: wantSource(newHistory, "declared"),
			source: func(t *testing.T, h *hostile) tiles.Source {
				return openDirSource(t, h.altered(t, newHistory, func(b []byte) []byte { return b[:len(b)-1] }))
			}},
		{name: "missing bundle", fresh: true, check: wantIs(tiles.ErrNotPublished, newHistory),
			source: func(t *testing.T, h *hostile) tiles.Source {
				dir := h.copyPub(t)
				os.Remove(filepath.Join(dir, newHistory))
				return openDirSource(t, dir)
			}},
	} {
		h.run(t, c)
	}
}

// TestSyncHostileHistoryDroppedBatch documents a limit of history
// bundles: a source that drops a checkpoint from the middle of the
// history (here the batch ending at 305) is not caught, since nothing
// chains the history checkpoints to one another: the next checkpoint
// still covers those entries with the right root, and the replica
// records them as accepted at its later time.
func TestSyncHostileHistoryDroppedBatch(t *testing.T) {
	h := newHostile(t)
	honest := filepath.Join(t.TempDir(), "honest")
	if _, err := syncDir(t, honest, h.pub, h.w.VerifierKey()); err != nil {
		t.Fatal(err)
	}
	dropped := filepath.Join(t.TempDir(), "dropped")
	src := h.editHistory(t, newHistory, func(c [][]byte) [][]byte { return [][]byte{c[0], c[2]} })
	if _, err := syncDir(t, dropped, src, h.w.VerifierKey()); err != nil {
		t.Fatalf("LIMITATION fixed? a dropped history checkpoint is now refused: %v; update this test", err)
	}
	_, want := acceptedTimes(t, honest)
	_, got := acceptedTimes(t, dropped)
	for i := range want {
		if late := i >= 300 && i < 305; got[i].Equal(want[i]) == late || (late && !got[i].Equal(want[309])) {
			t.Fatalf("entry %d accepted at %s, the writer's time %s", i, got[i], want[i])
		}
	}
}

// TestSyncHostileRollsBack: a refusal after the sync committed part of
// the new entries (big ones: several durable batches of MaxBatchBytes/2)
// removes them, and their history, again.
func TestSyncHostileRollsBack(t *testing.T) {
	w := newHistoryWriter(t)
	pub := filepath.Join(t.TempDir(), "pub")
	w.add(t, 10)
	w.publish(t, pub)
	rdir := filepath.Join(t.TempDir(), "replica")
	if _, err := syncDir(t, rdir, pub, w.VerifierKey()); err != nil {
		t.Fatal(err)
	}
	before := stateOf(t, rdir)
	for b := range 3 {
		w.now = w.now.Add(time.Second)
		var batch [][]byte
		for i := range 120 {
			batch = append(batch, bytes.Repeat([]byte{byte(b), byte(i)}, 4500))
		}
		if _, err := w.Append(batch); err != nil {
			t.Fatal(err)
		}
	}
	w.publish(t, pub)
	const last = "tile/entries/001.p/114"
	name := filepath.Join(pub, last)
	good := readFileT(t, name)
	if err := os.WriteFile(name, flipByte(len(good)-1)(bytes.Clone(good)), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	for _, dir := range []string{rdir, fresh} {
		_, err := syncDir(t, dir, pub, w.VerifierKey())
		wantSource(last, "history checkpoint of size 370")(t, nil, err)
	}
	if after := stateOf(t, rdir); after != before {
		t.Fatalf("the refused sync changed the replica: %+v, was %+v", after, before)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused new replica left %s: %v", fresh, err)
	}
	if err := os.WriteFile(name, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := syncDir(t, rdir, pub, w.VerifierKey()); err != nil || s.After != 370 {
		t.Fatalf("the honest log syncs to %d: %v", s.After, err)
	}
}
