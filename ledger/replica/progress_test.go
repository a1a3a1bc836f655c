package replica

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/progress"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/tlog"
)

// progressLog records what a Progress was told and checks the contract:
// done never goes back, never passes total, total never changes, and the
// last call of a successful operation has done == total.
type progressLog struct {
	t     *testing.T
	calls int
	done  int64
	total int64
}

func (p *progressLog) progress() progress.Func {
	return func(done, total int64) {
		if p.calls > 0 && (done < p.done || total != p.total) {
			p.t.Errorf("call %d: %d of %d after %d of %d", p.calls, done, total, p.done, p.total)
		}
		if done > total || done < 0 {
			p.t.Errorf("call %d: %d of %d", p.calls, done, total)
		}
		p.calls++
		p.done, p.total = done, total
	}
}

func (p *progressLog) ended(what string, total int64, minCalls int) {
	p.t.Helper()
	if p.done != total || p.total != total || p.calls < minCalls {
		p.t.Errorf("%s: last call %d of %d after %d calls; want %d of %d after at least %d", what, p.done, p.total, p.calls, total, total, minCalls)
	}
}

func TestProgress(t *testing.T) {
	w := newWriter(t, "example.com/progress", 30, 1)
	batch := make([][]byte, 3000)
	for i := range batch {
		batch[i] = []byte(fmt.Sprintf("authority entry %05d", i+1))
	}
	if _, err := w.auth.Append(batch); err != nil {
		t.Fatal(err)
	}
	logs := []*ledger.Log{w.auth, w.decis}
	total := w.auth.Size() + w.decis.Size()

	exp := &progressLog{t: t}
	var b bytes.Buffer
	if err := ExportWith(&b, []string{"authority", "decisions"}, logs, exp.progress()); err != nil {
		t.Fatal(err)
	}
	exp.ended("export", total, 3) // every 1,024 entries, and the end
	path := filepath.Join(t.TempDir(), "ledger.export")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	imp := &progressLog{t: t}
	if _, err := ImportWith(t.TempDir(), path, ImportOptions{Progress: imp.progress()}); err != nil {
		t.Fatal(err)
	}
	imp.ended("import", 2*int64(b.Len()), 4) // bytes read in both passes

	www := t.TempDir()
	pub := &progressLog{t: t}
	if _, err := publish.PublishWith(w.auth, www, publish.PublishOptions{Progress: pub.progress()}); err != nil {
		t.Fatal(err)
	}
	nTiles := int64(len(tlog.NewTiles(tiles.Height, 0, w.auth.Size())))
	pub.ended("publish", nTiles, int(nTiles)) // a report after every tile

	src, err := tiles.OpenSource(www, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	syn := &progressLog{t: t}
	if _, err := Sync(context.Background(), filepath.Join(t.TempDir(), ledgerdir.AuthorityDir), src, SyncOptions{VKey: w.auth.Key(), History: true, Progress: syn.progress()}); err != nil {
		t.Fatal(err)
	}
	syn.ended("sync", w.auth.Size(), 3)
}
