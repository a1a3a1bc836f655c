package replica_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// The files of the second publication a hostile source alters: it
// crosses the edge of tile 0, and its last history bundle holds the
// checkpoints of the batches ending at 300, 305 and 310.
const (
	oldEntries = "tile/entries/000"
	newEntries = "tile/entries/001.p/54"
	oldHistory = "writ/history/000"
	newHistory = "writ/history/001.p/54"
)

// hostile is a log published at 100 entries (old, what every replica
// starts from), then at 310 (pub, which each case alters a copy of).
type hostile struct {
	w        *historyWriter
	old, pub string
	oldCP    []byte
}

func newHostile(t *testing.T) *hostile {
	h := &hostile{w: newHistoryWriter(t), pub: filepath.Join(t.TempDir(), "pub")}
	h.w.add(t, 100)
	h.w.publish(t, h.pub)
	h.old = h.copyPub(t)
	h.oldCP = readFileT(t, filepath.Join(h.old, "checkpoint"))
	for _, n := range []int{200, 5, 5} {
		h.w.add(t, n)
	}
	h.w.publish(t, h.pub)
	if got := h.historySizes(t, readFileT(t, filepath.Join(h.pub, newHistory))); !slices.Equal(got, []int64{300, 305, 310}) {
		t.Fatalf("%s holds the checkpoints of sizes %v", newHistory, got)
	}
	return h
}

func readFileT(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// copyPub returns a copy of the second publication.
func (h *hostile) copyPub(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(dir, os.DirFS(h.pub)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// altered returns a copy of the publication with edit applied to the
// file at path.
func (h *hostile) altered(t *testing.T, path string, edit func([]byte) []byte) string {
	t.Helper()
	dir := h.copyPub(t)
	name := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.WriteFile(name, edit(readFileT(t, name)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// editHistory returns a copy of the publication whose history bundle at
// path holds edit's checkpoints instead of its own.
func (h *hostile) editHistory(t *testing.T, path string, edit func([][]byte) [][]byte) string {
	return h.altered(t, path, func(b []byte) []byte {
		cps, err := tiles.ParseBundle(b, -1)
		if err != nil {
			t.Fatal(err)
		}
		return encodeBundle(t, edit(slices.Clone(cps)))
	})
}

func encodeBundle(t *testing.T, entries [][]byte) []byte {
	t.Helper()
	out := []byte{}
	for _, e := range entries {
		var err error
		if out, err = tiles.AppendBundle(out, e); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func (h *hostile) historySizes(t *testing.T, bundle []byte) []int64 {
	t.Helper()
	cps, err := tiles.ParseBundle(bundle, -1)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, b := range cps {
		tc, err := formats.OpenTimedCheckpoint(b, h.w.Key())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tc.Size)
	}
	return out
}

func (h *hostile) opts() replica.SyncOptions {
	return replica.SyncOptions{VKey: h.w.Key(), History: true}
}

func openDirSource(t *testing.T, dir string) tiles.Source {
	t.Helper()
	src, err := tiles.OpenSource(dir, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// replicaState is what a refused sync must leave as it was.
type replicaState struct {
	signed string
	size   int64
	times  int
}

func stateOf(t *testing.T, dir string) replicaState {
	t.Helper()
	l, err := ledger.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := l.Checkpoint()
	size := l.Size()
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, times := acceptedTimes(t, dir) // verifies the whole replica
	return replicaState{string(signed), size, len(times)}
}

// hostileCase is a source a replica of 100 entries syncs from.
type hostileCase struct {
	name    string
	prepare func(t *testing.T, h *hostile, rdir string) // before the attempt (optional)
	source  func(t *testing.T, h *hostile) tiles.Source
	fresh   bool // a new replica refuses it too, and leaves no directory
	check   func(t *testing.T, h *hostile, err error)
}

// run syncs a replica of the old publication from the case's source,
// checks the outcome, and that a refusal left the replica as it was
// (the honest publication still syncs), or, for a new replica, left no
// directory.
func (h *hostile) run(t *testing.T, c hostileCase) {
	t.Run(c.name, func(t *testing.T) {
		rdir := filepath.Join(t.TempDir(), "replica")
		if _, err := syncDir(t, rdir, h.old, h.w.VerifierKey()); err != nil {
			t.Fatal(err)
		}
		if c.prepare != nil {
			c.prepare(t, h, rdir)
		}
		before := stateOf(t, rdir)
		_, err := replica.Sync(context.Background(), rdir, c.source(t, h), h.opts())
		c.check(t, h, err)
		if err == nil {
			if got := stateOf(t, rdir); got.signed != string(h.w.signed(t)) || got.size != h.w.Size() {
				t.Fatalf("synced to %d entries, %q; want the writer's %d", got.size, got.signed, h.w.Size())
			}
			return
		}
		if after := stateOf(t, rdir); after != before {
			t.Fatalf("the refused sync changed the replica: %+v, was %+v", after, before)
		}
		if s, err := syncDir(t, rdir, h.pub, h.w.VerifierKey()); err != nil || s.After != h.w.Size() {
			t.Fatalf("after the refusal, the honest log syncs to %d: %v", s.After, err)
		}
		if c.fresh {
			fresh := filepath.Join(t.TempDir(), "fresh")
			_, err := replica.Sync(context.Background(), fresh, c.source(t, h), h.opts())
			c.check(t, h, err)
			if _, serr := os.Stat(fresh); !errors.Is(serr, os.ErrNotExist) {
				t.Fatalf("a refused new replica left %s: %v", fresh, serr)
			}
		}
	})
}

func wantOK(t *testing.T, _ *hostile, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("sync refused an honest log: %v", err)
	}
}

// wantSource wants a *SourceError about path ("" any) whose message says
// every one of says.
func wantSource(path string, says ...string) func(*testing.T, *hostile, error) {
	return func(t *testing.T, _ *hostile, err error) {
		t.Helper()
		var se *replica.SourceError
		if !errors.As(err, &se) || !errors.Is(err, replica.ErrSourceLog) {
			t.Fatalf("want a *replica.SourceError, got %T: %v", err, err)
		}
		if (path != "" && se.Path != path) || !strings.Contains(err.Error(), se.Path) {
			t.Fatalf("the evidence names %q, want %q: %v", se.Path, path, err)
		}
		for _, s := range says {
			if !strings.Contains(err.Error(), s) {
				t.Fatalf("want an error saying %q: %v", s, err)
			}
		}
	}
}

// wantIs wants an error wrapping target whose message says any of says.
func wantIs(target error, says ...string) func(*testing.T, *hostile, error) {
	return func(t *testing.T, _ *hostile, err error) {
		t.Helper()
		if !errors.Is(err, target) {
			t.Fatalf("want an error wrapping %q, got %T: %v", target, err, err)
		}
		if len(says) > 0 && !slices.ContainsFunc(says, func(s string) bool { return strings.Contains(err.Error(), s) }) {
			t.Fatalf("want an error saying one of %q: %v", says, err)
		}
	}
}

// wantInconsistent wants an *InconsistencyError with both signed
// checkpoints, saying why, and a consistency proof if proof.
func wantInconsistent(why string, proof bool) func(*testing.T, *hostile, error) {
	return func(t *testing.T, h *hostile, err error) {
		t.Helper()
		var ie *ledger.InconsistencyError
		if !errors.As(err, &ie) || !errors.Is(err, ledger.ErrInconsistent) {
			t.Fatalf("want a *ledger.InconsistencyError, got %T: %v", err, err)
		}
		if !strings.Contains(ie.Why, why) || len(ie.TrustedSigned) == 0 || len(ie.FoundSigned) == 0 || (ie.Proof != nil) != proof {
			t.Fatalf("want the evidence (why %q, proof %v): %+v", why, proof, ie)
		}
		trusted, terr := formats.OpenCheckpoint(ie.TrustedSigned, h.w.Key())
		found, ferr := formats.OpenCheckpoint(ie.FoundSigned, h.w.Key())
		if terr != nil || ferr != nil || trusted != ie.Trusted || found != ie.Found {
			t.Fatalf("the signed checkpoints are not the evidence's: %v, %v, %+v", terr, ferr, ie)
		}
		if !proof {
			return
		}
		// The proof, between both signed roots, verifies for a rollback
		// and fails for a fork.
		q := *ie.Proof
		q.OldRoot, q.NewRoot = ie.Trusted.Hash, ie.Found.Hash
		if q.OldSize == ie.Found.Size {
			q.OldRoot, q.NewRoot = ie.Found.Hash, ie.Trusted.Hash
		}
		if forked := strings.Contains(ie.Why, "fork"); (q.Verify() == nil) == forked {
			t.Fatalf("the consistency proof between the signed roots: %v, for %q", q.Verify(), ie.Why)
		}
	}
}

// prefixFork shares the first 50 entries of the hostile log, then
// differs.
func prefixFork(t *testing.T) *historyWriter {
	w := otherWriter(t, 1, 0, 50)
	w.next = 1000
	w.add(t, 260)
	return w
}

func wantOlder(t *testing.T, h *hostile, err error) {
	t.Helper()
	wantInconsistent("older than the replica's", true)(t, h, err)
	var ie *ledger.InconsistencyError
	errors.As(err, &ie)
	if !bytes.Equal(ie.TrustedSigned, h.w.signed(t)) || !bytes.Equal(ie.FoundSigned, h.oldCP) || ie.Trusted.Size != 310 || ie.Found.Size != 100 {
		t.Fatalf("the evidence is not both signed checkpoints: %+v", ie)
	}
}
