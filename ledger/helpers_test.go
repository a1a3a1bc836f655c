package ledger_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
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

func syncDir(t *testing.T, dir, from, vkey string) (replica.Synced, error) {
	t.Helper()
	return replica.Sync(context.Background(), dir, openDirSource(t, from), replica.SyncOptions{VKey: testLogKey(t, vkey), History: true})
}

func openDirSource(t *testing.T, dir string) tiles.Source {
	t.Helper()
	src, err := tiles.OpenSource(dir, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// openDecisions opens (or makes) the decision log at dir and closes it.
func openDecisions(dir string, kp ledgerdir.KeyParams) error {
	if kp.Rand == nil {
		kp.Rand = rand.Reader
	}
	l, err := ledgerdir.OpenDecisions(dir, "example.com/runner-test", kp)
	if err != nil {
		return err
	}
	return l.Close()
}
