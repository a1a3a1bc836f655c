package publish_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// Regressions from the hostile review of publish, serve and directory
// sources: a planted file never hangs writ, is never written through,
// and never published over.

func TestPublishRefusesPlantedFiles(t *testing.T) {
	w := newHistoryWriter(t)
	w.add(t, 100)
	out := filepath.Join(t.TempDir(), "pub")
	w.publish(t, out)
	w.add(t, 200)

	// A symbolic link planted for a directory is not written through.
	elsewhere := t.TempDir()
	esc := copyTree(t, out)
	os.RemoveAll(filepath.Join(esc, "tile/entries"))
	if err := os.Symlink(elsewhere, filepath.Join(esc, "tile/entries")); err != nil {
		t.Fatal(err)
	}
	if _, err := publish.Publish(w.Log, esc); !errors.Is(err, publish.ErrPublish) {
		t.Fatalf("publish through a planted symlink: %v", err)
	}
	if names, _ := os.ReadDir(elsewhere); len(names) != 0 {
		t.Fatalf("publish wrote %d files through the symlink", len(names))
	}
	// A full tile planted ahead of the log is refused, not kept.
	planted := copyTree(t, out)
	if err := os.WriteFile(filepath.Join(planted, "tile/entries/000"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := publish.Publish(w.Log, planted); !errors.Is(err, publish.ErrPublish) {
		t.Fatalf("publish over a planted full tile: %v", err)
	}
	// A checkpoint that is a device or a FIFO is refused at once.
	dev := copyTree(t, out)
	os.Remove(filepath.Join(dev, "checkpoint"))
	if err := os.Symlink("/dev/zero", filepath.Join(dev, "checkpoint")); err != nil {
		t.Fatal(err)
	}
	if _, err := publish.Publish(w.Log, dev); !errors.Is(err, publish.ErrPublish) {
		t.Fatalf("publish over /dev/zero: %v", err)
	}
	fifo := copyTree(t, out)
	os.Remove(filepath.Join(fifo, "checkpoint"))
	if err := syscall.Mkfifo(filepath.Join(fifo, "checkpoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := publish.Publish(w.Log, fifo); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, publish.ErrPublish) {
			t.Fatalf("publish over a FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("publish hangs on a FIFO")
	}
	// A sync from a directory holding a FIFO is refused at once too.
	go func() {
		_, err := replica.Sync(context.Background(), filepath.Join(t.TempDir(), "r"), openDirSource(t, fifo), replica.SyncOptions{VKey: w.Key(), History: true})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, tiles.ErrFetch) {
			t.Fatalf("sync from a FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("sync hangs on a FIFO")
	}
	// The honest publication still extends.
	if p, err := publish.Publish(w.Log, out); err != nil || p.After != 300 {
		t.Fatalf("%+v, %v", p, err)
	}
}

// TestServeIndexBounds: a tile index past what any tree can hold is 404,
// never another tile's bytes or a 500.
func TestServeIndexBounds(t *testing.T) {
	w := newHistoryWriter(t)
	w.add(t, 10)
	hs := httptest.NewServer(publish.NewServer(func() (*ledger.Log, error) { return w.Log, nil }, publish.ServeOptions{Lease: time.Hour}))
	defer hs.Close()
	for _, p := range []string{"tile/entries/x072/x057/x594/x037/x927/936", "tile/entries/x036/x028/x797/x018/x963/971.p/5", "writ/history/x072/x057/x594/x037/x927/936", "tile/0/x072/x057/x594/x037/x927/936"} {
		resp, err := http.Get(hs.URL + "/" + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("%s: status %d, want 404", p, resp.StatusCode)
		}
	}
}

func copyTree(t *testing.T, src string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dir
}
