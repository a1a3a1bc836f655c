package replica_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// historyWriter is an authority-style log (with a checkpoint history)
// whose clock advances one second per batch.
type historyWriter struct {
	*ledger.Log
	dir  string
	now  time.Time
	next int
}

func newHistoryWriter(t *testing.T) *historyWriter {
	t.Helper()
	w := &historyWriter{dir: filepath.Join(t.TempDir(), "writer"), now: time.Unix(1_700_000_000, 0)}
	l, err := ledger.CreateWithHistory(w.dir, "example.com/tiles", testkit.Key(t, 1), func() time.Time { return w.now })
	if err != nil {
		t.Fatal(err)
	}
	w.Log = l
	t.Cleanup(func() { w.Close() })
	return w
}

// add appends n entries in one batch, a second after the last.
func (w *historyWriter) add(t *testing.T, n int) {
	t.Helper()
	w.now = w.now.Add(time.Second)
	var b [][]byte
	for range n {
		b = append(b, []byte(fmt.Sprintf("entry %d %x", w.next, make([]byte, w.next%11))))
		w.next++
	}
	if _, err := w.Append(b); err != nil {
		t.Fatal(err)
	}
}

func (w *historyWriter) publish(t *testing.T, to string) publish.Published {
	t.Helper()
	p, err := publish.Publish(w.Log, to)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func syncDir(t *testing.T, rdir, from, vkey string) (replica.Synced, error) {
	t.Helper()
	src, err := tiles.OpenSource(from, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return replica.Sync(context.Background(), rdir, src, replica.SyncOptions{VKey: testLogKey(t, vkey), History: true})
}

// acceptedTimes verifies a log and returns its entries' accepted times.
func acceptedTimes(t *testing.T, dir string) (formats.Checkpoint, []time.Time) {
	t.Helper()
	l, err := ledger.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out []time.Time
	cp, err := l.Verify(l.Key(), func(_ int64, _ []byte, at time.Time) error {
		out = append(out, at)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return cp, out
}

// TestPublishSync: a log published in steps, across tile edges and with a
// batch that spans a whole tile, synced in steps, reaches the writer's
// root and the writer's accepted time for every entry.
func TestPublishSync(t *testing.T) {
	w := newHistoryWriter(t)
	out := filepath.Join(t.TempDir(), "pub")
	rdir := filepath.Join(t.TempDir(), "replica")
	steps := [][]int{{1}, {3, 250}, {2}, {300, 1, 1}, {}, {256}, {600}}
	for k, step := range steps {
		for _, n := range step {
			w.add(t, n)
		}
		p := w.publish(t, out)
		if p.After != w.Size() {
			t.Fatalf("step %d: published size %d, want %d", k, p.After, w.Size())
		}
		s, err := syncDir(t, rdir, out, w.VerifierKey())
		if err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		if s.After != w.Size() {
			t.Fatalf("step %d: synced to %d, want %d", k, s.After, w.Size())
		}
		want := w.Size()
		wcp, _ := w.SignedHead()
		rcp, times := acceptedTimes(t, rdir)
		if rcp != wcp || int64(len(times)) != want {
			t.Fatalf("step %d: replica %+v (%d times), writer %+v", k, rcp, len(times), wcp)
		}
	}
	w.Close()
	_, wt := acceptedTimes(t, w.dir)
	_, rt := acceptedTimes(t, rdir)
	for i := range wt {
		if !wt[i].Equal(rt[i]) {
			t.Fatalf("entry %d accepted at %s on the writer, %s on the replica", i, wt[i], rt[i])
		}
	}
	if _, err := os.Stat(filepath.Join(out, "tile/entries/000")); err != nil {
		t.Fatal(err)
	}
	var _ = errors.Is
}
