package publish_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// countingMetrics records what a Server reports.
type countingMetrics struct {
	mu       sync.Mutex
	size     int64
	requests map[string]int
}

func (m *countingMetrics) Checkpoint(size int64, _ time.Time) {
	m.mu.Lock()
	m.size = size
	m.mu.Unlock()
}

func (m *countingMetrics) Request(kind string, status, _ int) {
	m.mu.Lock()
	m.requests[kind+" "+http.StatusText(status)]++
	m.mu.Unlock()
}

// TestServeMatchesPublish: ledger serve answers every published path with
// the bytes Publish wrote, with the caching C2SP asks for (tiles
// immutable, the checkpoint uncached), gzip for bundles on request, 404
// for what the tree does not have, and a replica syncs from it; the
// writer appends while the server runs and the next sync sees it.
func TestServeMatchesPublish(t *testing.T) {
	w := newHistoryWriter(t)
	w.add(t, 300)
	w.add(t, 7)
	out := filepath.Join(t.TempDir(), "pub")
	w.publish(t, out)
	m := &countingMetrics{requests: map[string]int{}}
	// The server shares the writer's open log (a lease that outlasts the
	// test, so it never closes it); the CLI test serves a log directory.
	srv := publish.NewServer(func() (*ledger.Log, error) { return w.Log, nil }, publish.ServeOptions{Metrics: m, Lease: time.Hour})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	get := func(path string, gz bool) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", hs.URL+"/"+path, nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	for _, p := range []string{"checkpoint", "tile/0/000", "tile/0/001.p/51", "tile/1/000.p/1", "tile/entries/000", "tile/entries/001.p/51", "writ/history/000", "writ/history/001.p/51"} {
		resp, body := get(p, false)
		want := readFileT(t, filepath.Join(out, filepath.FromSlash(p)))
		if resp.StatusCode != 200 || !bytes.Equal(body, want) {
			t.Fatalf("%s: status %d, %d bytes; published %d bytes", p, resp.StatusCode, len(body), len(want))
		}
		cc := resp.Header.Get("Cache-Control")
		if (p == "checkpoint") != (cc == "no-cache") || (p != "checkpoint" && cc != "public, max-age=31536000, immutable") {
			t.Fatalf("%s: Cache-Control %q", p, cc)
		}
	}
	resp, body := get("tile/entries/000", true)
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("entry bundle not gzipped on request: %v", resp.Header)
	}
	z, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(z)
	if !bytes.Equal(plain, readFileT(t, filepath.Join(out, "tile/entries/000"))) {
		t.Fatal("gzipped bundle differs from the published one")
	}
	for _, p := range []string{"tile/entries/002", "tile/0/001", "tile/entries/001.p/52", "tile/0/0", "../checkpoint", "tile/9/000"} {
		if resp, _ := get(p, false); resp.StatusCode != 404 {
			t.Fatalf("%s: status %d, want 404", p, resp.StatusCode)
		}
	}
	if r, _ := http.Post(hs.URL+"/checkpoint", "text/plain", nil); r.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST: status %d", r.StatusCode)
	}
	rdir := filepath.Join(t.TempDir(), "replica")
	src, err := tiles.OpenSource(hs.URL, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s, err := replica.Sync(context.Background(), rdir, src, replica.SyncOptions{VKey: w.Key(), History: true})
	if err != nil || s.After != 307 {
		t.Fatalf("sync from serve: %+v, %v", s, err)
	}
	w.add(t, 3)
	s, err = replica.Sync(context.Background(), rdir, src, replica.SyncOptions{VKey: w.Key(), History: true})
	if err != nil || s.Before != 307 || s.After != 310 {
		t.Fatalf("second sync: %+v, %v", s, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.size != 310 || m.requests["checkpoint OK"] < 3 || m.requests["entries Not Found"] != 2 {
		t.Fatalf("metrics: size %d, requests %v", m.size, m.requests)
	}
}

// TestServeLeases: a server reading a log directory answers after sitting
// idle, and lets a writer in: an idle lease is closed when it expires,
// and the writer's appends are served after the next open. (New-user
// trial: an idle server once never answered again and kept the writer
// out.)
func TestServeLeases(t *testing.T) {
	w := newHistoryWriter(t)
	w.add(t, 3)
	vkey := w.VerifierKey()
	w.Close()
	srv := publish.NewServer(func() (*ledger.Log, error) { return ledger.OpenReadOnly(w.dir) }, publish.ServeOptions{Lease: 100 * time.Millisecond})
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	client := &http.Client{Timeout: 5 * time.Second}
	size := func() int64 {
		t.Helper()
		resp, err := client.Get(hs.URL + "/checkpoint")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		cp, err := formats.OpenCheckpoint(b, testLogKey(t, vkey))
		if err != nil {
			t.Fatal(err)
		}
		return cp.Size
	}
	if n := size(); n != 3 {
		t.Fatalf("size %d", n)
	}
	time.Sleep(400 * time.Millisecond)
	if n := size(); n != 3 {
		t.Fatalf("after idling: size %d", n)
	}
	time.Sleep(400 * time.Millisecond)
	l, err := ledgerdir.OpenWaiting(w.dir, testkit.Key(t, 1), 5*time.Second)
	if err != nil {
		t.Fatalf("a writer after the server idled: %v", err)
	}
	if _, err := l.Append([][]byte{[]byte("x")}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if n := size(); n != 4 {
		t.Fatalf("after the writer appended: size %d", n)
	}
}
