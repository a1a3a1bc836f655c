package testkit_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
)

func TestNginxServesTlogTiles(t *testing.T) {
	root := t.TempDir()
	checkpoint := []byte("example.com/writ\n1\nAAAA\n\n— example.com/writ sig\n")
	bundle := bytes.Repeat([]byte("\x00\x10entry-bundle-abc"), 256) // compressible, > gzip_min_length
	mustWrite(t, filepath.Join(root, "checkpoint"), checkpoint)
	mustWrite(t, filepath.Join(root, "tile", "entries", "000"), bundle)

	url := testkit.Nginx(t, root)

	const immutable = "public, max-age=31536000, immutable"
	cases := []struct {
		path, contentType, cacheControl string
		body                            []byte
	}{
		{"/checkpoint", "text/plain; charset=utf-8", "no-cache", checkpoint},
		{"/tile/entries/000", "application/octet-stream", immutable, bundle},
	}
	for _, c := range cases {
		resp, err := http.Get(url + c.path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", c.path, resp.Status)
		}
		if !bytes.Equal(got, c.body) {
			t.Errorf("GET %s: body %q, want %q", c.path, got, c.body)
		}
		if h := resp.Header.Get("Content-Type"); h != c.contentType {
			t.Errorf("GET %s: Content-Type %q, want %q", c.path, h, c.contentType)
		}
		if h := resp.Header.Get("Cache-Control"); h != c.cacheControl {
			t.Errorf("GET %s: Cache-Control %q, want %q", c.path, h, c.cacheControl)
		}
	}

	// The entry bundle comes gzipped to a client that asks (C2SP: entry
	// bundles SHOULD be compressed at the HTTP layer).
	req, _ := http.NewRequest("GET", url+"/tile/entries/000", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if h := resp.Header.Get("Content-Encoding"); h != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", h)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, bundle) {
		t.Errorf("gunzipped bundle: %d bytes, err %v; want %d bytes", len(got), err, len(bundle))
	}

	// A missing tile is a 404 that no cache may keep for a year.
	resp, err = http.Get(url + "/tile/entries/001")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Cache-Control") != "" {
		t.Errorf("missing tile: %s, Cache-Control %q; want 404 without it", resp.Status, resp.Header.Get("Cache-Control"))
	}
}

func TestNginxStopTwice(t *testing.T) {
	if _, err := testkit.NginxBinary(); err != nil && os.Getenv(testkit.RequireNginxEnv) != "1" {
		t.Skip(err)
	}
	url, stop, err := testkit.StartNginx(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatalf("second stop: %v", err)
	}
	if resp, err := http.Get(url + "/checkpoint"); err == nil {
		resp.Body.Close()
		t.Errorf("nginx on %s still answers after stop", url)
	}
}

func mustWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
