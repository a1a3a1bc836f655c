package publish

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// held is what b holds now, and the most it held.
func (b *byteBudget) state() (held, peak int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held, b.peak
}

// TestAnswerBody: a body is held in chunks counted against the budget;
// gzipping it gives back the plain chunks as the compressor takes them
// (the two are never both held whole); a write past the budget fails
// with errBudget; drop gives back everything.
func TestAnswerBody(t *testing.T) {
	b := &byteBudget{limit: 4 << 20}
	plain := make([]byte, 1<<20)
	for i := range plain {
		plain[i] = byte(rand.IntN(16)) // compresses to about half
	}
	a := newAnswerBody(b)
	for p := plain; len(p) > 0; p = p[min(len(p), 7000):] {
		if _, err := a.Write(p[:min(len(p), 7000)]); err != nil {
			t.Fatal(err)
		}
	}
	if held, _ := b.state(); a.size != len(plain) || held < int64(len(plain)) || held > int64(len(plain))+bodyChunk {
		t.Fatalf("body of %d bytes written: size %d, %d bytes held", len(plain), a.size, held)
	}
	z, err := a.gzip()
	if err != nil {
		t.Fatal(err)
	}
	held, peak := b.state()
	if want := int64(len(plain)) + gzipState + 2*bodyChunk; peak > want {
		t.Errorf("gzip: %d bytes held at most, want at most %d (the plain body, the compressor and a chunk)", peak, want)
	}
	if held > int64(z.size)+bodyChunk || held < int64(z.size) {
		t.Errorf("gzipped body of %d bytes: %d held (the plain one not given back?)", z.size, held)
	}
	var zb bytes.Buffer
	for _, c := range z.chunks {
		zb.Write(c)
	}
	r, err := gzip.NewReader(&zb)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("gunzipped: %d bytes, %v; want the %d written", len(got), err, len(plain))
	}
	z.drop()
	big := newAnswerBody(b)
	if _, err := big.Write(make([]byte, 5<<20)); !errors.Is(err, errBudget) {
		t.Errorf("a write past the budget: %v, want errBudget", err)
	}
	big.drop()
	if held, _ := b.state(); held != 0 {
		t.Errorf("%d bytes held after every body was dropped", held)
	}
}

// TestServeAnswerBudget: a client that asks for a large bundle and does
// not read holds its bytes of the budget (not a read slot); the next
// request that does not fit is refused 503 with Retry-After at once;
// the slow client is cut off at the minimum write rate, its bytes given
// back, and the bundle is then served, plain and gzipped.
func TestServeAnswerBudget(t *testing.T) {
	l, err := ledger.CreateWithHistory(filepath.Join(t.TempDir(), "log"), "example.com/big", testkit.Key(t, 1), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for n := 0; n < tiles.Width; n += 20 { // 20 entries of 60,000 bytes a batch: under MaxBatchBytes
		var batch [][]byte
		for i := n; i < min(n+20, tiles.Width); i++ {
			batch = append(batch, bytes.Repeat([]byte(fmt.Sprintf("%-10d", i)), 6000))
		}
		if _, err := l.Append(batch); err != nil {
			t.Fatal(err)
		}
	}
	bundle, err := l.ReadTile(tiles.Tile{Kind: tiles.KindEntries, Level: -1, W: tiles.Width}, tiles.Width)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(func() (*ledger.Log, error) { return l, nil }, ServeOptions{Lease: time.Hour, MinWriteRate: 32 << 10})
	srv.budget.limit = int64(len(bundle)) + 2<<20 // room for one bundle gzipped, not two
	hs := httptest.NewServer(srv)
	defer hs.Close()

	slow := dialSmallBuffer(t, hs.Listener.Addr().String())
	io.WriteString(slow, "GET /tile/entries/000 HTTP/1.1\r\nHost: x\r\n\r\n")
	// Its answer is read (the status line is written after the read), and
	// most of it held: the socket's buffers take a few MB at most.
	slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	status := make([]byte, 12)
	if _, err := io.ReadFull(slow, status); err != nil || string(status) != "HTTP/1.1 200" {
		t.Fatalf("the slow client's answer: %q, %v", status, err)
	}
	waitHeld(t, srv.budget, func(held int64) bool { return held > 4<<20 }, "the slow client's answer held")
	asked := time.Now()
	res, err := http.Get(hs.URL + "/tile/entries/000")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	want := budgetRefusal(srv.budget.limit, time.Second) + "\n"
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "1" || string(body) != want || time.Since(asked) > 2*time.Second {
		t.Errorf("past the budget: %s, Retry-After %q, %q after %s; want 503, 1, %q within 2 s", res.Status, res.Header.Get("Retry-After"), body, time.Since(asked), want)
	}
	// Cut off at 32 KiB/s (2 s for a chunk of 64 KiB the socket does not
	// take), the slow client's bytes come back; it is still connected.
	waitHeld(t, srv.budget, func(held int64) bool { return held == 0 }, "nothing held")
	for _, gz := range []bool{false, true} {
		req, _ := http.NewRequest("GET", hs.URL+"/tile/entries/000", nil)
		req.Header.Set("Accept-Encoding", "identity") // set by hand: the transport does not gunzip
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = res.Body
		if gz {
			if r, err = gzip.NewReader(res.Body); err != nil {
				t.Fatal(err)
			}
		}
		got, err := io.ReadAll(r)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || err != nil || !bytes.Equal(got, bundle) {
			t.Errorf("gzip %v after the cut-off: %s, %d bytes (%v); want 200 and the %d-byte bundle", gz, res.Status, len(got), err, len(bundle))
		}
	}
	waitHeld(t, srv.budget, func(held int64) bool { return held == 0 }, "nothing held at the end")
}

// dialSmallBuffer connects to addr with a 4 KiB receive buffer.
func dialSmallBuffer(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		rc.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitHeld waits up to 10 s for the budget to hold what ok accepts.
func waitHeld(t *testing.T, b *byteBudget, ok func(held int64) bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		held, _ := b.state()
		if ok(held) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %d bytes held after 10 s", what, held)
		}
	}
}
