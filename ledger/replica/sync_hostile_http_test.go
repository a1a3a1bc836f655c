package replica_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger/tiles"
)

// serveHostile serves the publication at dir over HTTP, through wrap (nil: as
// it is), and returns a source for it that allows timeout per request.
func serveHostile(t *testing.T, dir string, timeout time.Duration, wrap func(files http.Handler) http.Handler) tiles.Source {
	t.Helper()
	var h http.Handler = http.FileServer(http.Dir(dir))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	src, err := tiles.OpenSource(srv.URL, timeout)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// onPath answers a request for path with bad, any other with the files.
func onPath(path string, bad http.HandlerFunc) func(http.Handler) http.Handler {
	return func(files http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/"+path {
				bad(w, r)
				return
			}
			files.ServeHTTP(w, r)
		})
	}
}

// stallHTTP answers nothing until the client gives up.
func stallHTTP(_ http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// stallBody sends half of data, then stalls.
func stallBody(data []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		stallHTTP(w, r)
	}
}

// endlessBody sends bytes until the client hangs up.
func endlessBody(w http.ResponseWriter, r *http.Request) {
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for r.Context().Err() == nil {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// redirectTiles sends every request for a tile to the same path at to(r).
func redirectTiles(to func(r *http.Request) string) func(http.Handler) http.Handler {
	return func(files http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/tile/") {
				http.Redirect(w, r, to(r)+r.URL.Path, http.StatusFound)
				return
			}
			files.ServeHTTP(w, r)
		})
	}
}

func TestSyncHostileHTTP(t *testing.T) {
	h := newHostile(t)
	const short = 300 * time.Millisecond
	via := func(timeout time.Duration, wrap func(http.Handler) http.Handler) func(*testing.T, *hostile) tiles.Source {
		return func(t *testing.T, h *hostile) tiles.Source { return serveHostile(t, h.pub, timeout, wrap) }
	}
	other := func(t *testing.T, h *hostile) tiles.Source {
		b := httptest.NewServer(http.FileServer(http.Dir(h.pub)))
		t.Cleanup(b.Close)
		return serveHostile(t, h.pub, 5*time.Second, redirectTiles(func(*http.Request) string { return b.URL }))
	}
	mirror := func(files http.Handler) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("/mirror/", http.StripPrefix("/mirror", files))
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/mirror"+r.URL.Path, http.StatusMovedPermanently)
		})
		return mux
	}
	for _, c := range []hostileCase{
		{name: "honest", check: wantOK, source: via(5*time.Second, nil)},
		{name: "same-origin redirect", check: wantOK, source: via(5*time.Second, mirror)},
		{name: "stalled response", fresh: true, check: wantIs(tiles.ErrFetch, "stalled"), source: via(short, onPath(newEntries, stallHTTP))},
		{name: "stalled body", fresh: true, check: wantIs(tiles.ErrFetch, "stalled"),
			source: func(t *testing.T, h *hostile) tiles.Source {
				return serveHostile(t, h.pub, short, onPath(newEntries, stallBody(readFileT(t, filepath.Join(h.pub, newEntries)))))
			}},
		{name: "stalled checkpoint", fresh: true, check: wantIs(tiles.ErrFetch, "stalled"), source: via(short, onPath("checkpoint", stallHTTP))},
		{name: "endless bundle", fresh: true, check: wantIs(tiles.ErrFetch, "cut off", "more than"), source: via(5*time.Second, onPath(newEntries, endlessBody))},
		{name: "endless checkpoint", fresh: true, check: wantIs(tiles.ErrFetch, "cut off", "more than"), source: via(5*time.Second, onPath("checkpoint", endlessBody))},
		{name: "announced too large", fresh: true, check: wantIs(tiles.ErrFetch, "announced"),
			source: via(5*time.Second, onPath(newHistory, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "1000000000")
				w.Write([]byte("x"))
			}))},
		{name: "redirect to another port", fresh: true, check: wantIs(tiles.ErrFetch, "to another origin"), source: other},
		{name: "redirect to localhost", fresh: true, check: wantIs(tiles.ErrFetch, "to another origin"),
			source: via(5*time.Second, redirectTiles(func(r *http.Request) string {
				return "http://" + strings.Replace(r.Host, "127.0.0.1", "localhost", 1)
			}))},
		{name: "redirect loop", fresh: true, check: wantIs(tiles.ErrFetch, "more than 3 redirects"),
			source: via(5*time.Second, func(http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, r.URL.Path, http.StatusFound) })
			})},
		{name: "server error", fresh: true, check: wantIs(tiles.ErrFetch, "HTTP status 500"),
			source: via(5*time.Second, onPath(newEntries, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }))},
		{name: "not found", fresh: true, check: wantIs(tiles.ErrNotPublished, "404"), source: via(5*time.Second, onPath(newHistory, http.NotFound))},
		{name: "forged bundle", fresh: true, check: wantSource(newEntries),
			source: func(t *testing.T, h *hostile) tiles.Source {
				return serveHostile(t, h.altered(t, newEntries, flipByte(2)), 5*time.Second, nil)
			}},
	} {
		h.run(t, c)
	}
}

// TestOpenSourceURLs: plain HTTP only to a loopback host.
func TestOpenSourceURLs(t *testing.T) {
	dir := t.TempDir()
	for _, from := range []string{
		"https://example.com/log", "https://example.com", "http://127.0.0.1:8080/log/", "http://127.5.6.7/",
		"http://localhost/", "http://[::1]:80/", dir, "file://" + dir,
	} {
		if _, err := tiles.OpenSource(from, 0); err != nil {
			t.Errorf("OpenSource(%q): %v", from, err)
		}
	}
	for _, from := range []string{
		"http://example.com/log", "http://10.0.0.1/", "http://192.168.1.1:8080/", "http://0.0.0.0/",
		"http://localhost.example.com/", "http://127.0.0.1.nip.io/", "http://[::ffff:8.8.8.8]/", "HTTP://example.com/",
		"ftp://example.com/", "https://", "https://user@example.com/", "https://example.com/?a=b", "https://example.com/#x",
		"file://host/log", filepath.Join(dir, "missing"), "",
	} {
		if _, err := tiles.OpenSource(from, 0); !errors.Is(err, tiles.ErrSourceURL) {
			t.Errorf("OpenSource(%q): %v, want ErrSourceURL", from, err)
		}
	}
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := tiles.OpenSource(f, 0); !errors.Is(err, tiles.ErrSourceURL) {
		t.Errorf("OpenSource(a file): %v, want ErrSourceURL", err)
	}
}
