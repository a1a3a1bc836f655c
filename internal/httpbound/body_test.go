package httpbound

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSlowBodiesHoldNoSlot: on a real loopback listener, ten times
// --max-in-flight clients that send a byte of a large body and stall
// hold no place in flight (each holds 1 KiB of the body budget): a
// well-behaved submission is served meanwhile, its body whole in the
// handler.
func TestSlowBodiesHoldNoSlot(t *testing.T) {
	var got sync.Map
	s, ln := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("the handler's body: %v", err)
		}
		got.Store(string(b), true)
		io.WriteString(w, "ok")
	}), Limits{MaxConns: 64, MaxConnsPerClient: 64, MaxInFlight: 4, MaxPerClient: 4, MaxBodyBytes: 64 << 10})
	for range 40 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\nx", 64<<10)
	}
	time.Sleep(200 * time.Millisecond) // every slow body is being read
	if held := s.bodies.heldTotal(); held != 40*minBodyChunk {
		t.Errorf("40 stalled bodies hold %d bytes of the budget, want %d", held, 40*minBodyChunk)
	}
	body := strings.Repeat("record ", 5000) // 35,000 bytes: several chunks
	res, err := http.Post("http://"+ln.Addr().String()+"/", "application/octet-stream", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if _, ok := got.Load(body); res.StatusCode != 200 || !ok {
		t.Fatalf("a well-behaved submission beside 40 slow bodies: %s, body whole in the handler %v; want 200, true", res.Status, ok)
	}
}

// TestBodyBudget: bodies being received are held against the budget,
// per client (429) and in all (503), with their exact texts; a body cut
// off gives its bytes back.
func TestBodyBudget(t *testing.T) {
	s, err := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}), Limits{MaxInFlight: 2, MaxPerClient: 1, MaxBodyBytes: 64 << 10}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var pipes []*io.PipeWriter
	for _, from := range []string{"10.0.0.1:1", "10.0.0.2:1"} { // each stalls one byte short of 64 KiB: all the budget
		pr, pw := io.Pipe()
		pipes = append(pipes, pw)
		r := httptest.NewRequest(http.MethodPost, "/", pr)
		r.RemoteAddr, r.ContentLength = from, 64<<10
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.http.Handler.ServeHTTP(httptest.NewRecorder(), r)
		}()
		pw.Write(make([]byte, 64<<10-1))
	}
	for deadline := time.Now().Add(5 * time.Second); s.bodies.heldTotal() < 128<<10 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	for _, tc := range []struct {
		from   string
		status int
		retry  string
		text   string
	}{
		{"10.0.0.1:2", 429, "1", "too many bytes (max-body-buffer-per-client): 10.0.0.1's request bodies being received hold 65536 bytes, the limit per client (--max-per-client × the body limit); retry after 1s\n"},
		{"10.0.0.3:1", 503, "1", "busy (max-body-buffer): request bodies being received hold 131072 bytes, the limit (--max-in-flight × the body limit); retry after 1s\n"},
	} {
		rec := httptest.NewRecorder()
		s.http.Handler.ServeHTTP(rec, request(tc.from, "/", "0123456789"))
		if rec.Code != tc.status || rec.Header().Get("Retry-After") != tc.retry || rec.Body.String() != tc.text {
			t.Errorf("from %s: %d, Retry-After %q, %q; want %d, %q, %q", tc.from, rec.Code, rec.Header().Get("Retry-After"), rec.Body, tc.status, tc.retry, tc.text)
		}
	}
	for _, pw := range pipes {
		pw.CloseWithError(io.ErrUnexpectedEOF) // the clients go away
	}
	wg.Wait()
	rec := httptest.NewRecorder()
	s.http.Handler.ServeHTTP(rec, request("10.0.0.3:1", "/", "0123456789"))
	if rec.Code != 200 || s.bodies.heldTotal() != 0 {
		t.Errorf("after the stalled bodies went away: %d, %d bytes held; want 200, 0", rec.Code, s.bodies.heldTotal())
	}
}

// heldTotal is what c holds in all.
func (c *counter) heldTotal() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// TestBodyNotWhole: a body that does not arrive whole (fewer bytes than
// declared and the client gone, a chunked body cut short) is answered
// 400 body-read and never reaches the handler; a chunked body of exactly
// the limit is taken when the budget is that one body, and one byte
// more is 413.
func TestBodyNotWhole(t *testing.T) {
	var entered atomic.Int32
	s, ln := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered.Add(1)
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%d", len(b))
	}), Limits{MaxInFlight: 1, MaxPerClient: 1, MaxBodyBytes: 64 << 10, ReadTimeout: 2 * time.Second})
	chunked := func(n int) string {
		return fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", n, strings.Repeat("x", n))
	}
	for _, tc := range []struct {
		name, req string
		status    int
		body      string
	}{
		{"declared 1000, sent 10, gone", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789", 400, "bad request (body-read): the request body did not arrive whole (cut short, or not within --read-timeout 2s)\n"},
		{"chunked, cut inside a chunk", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n20\r\n wor", 400, "bad request (body-read): the request body did not arrive whole (cut short, or not within --read-timeout 2s)\n"},
		{"chunked, exactly the limit", chunked(64 << 10), 200, "65536"},
		{"chunked, one byte past the limit", chunked(64<<10 + 1), 413, "request too large (max-body-bytes): the body is over 65536 bytes, this server's limit for one request\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := entered.Load()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, tc.req)
			c.(*net.TCPConn).CloseWrite()
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status || string(body) != tc.body {
				t.Errorf("%d %q, want %d %q", res.StatusCode, body, tc.status, tc.body)
			}
			if got := entered.Load() - before; (tc.status == 200) != (got == 1) {
				t.Errorf("the handler was entered %d times", got)
			}
		})
	}
	if held := s.bodies.heldTotal(); held != 0 {
		t.Errorf("%d bytes still held", held)
	}
}

// TestHTTP1Only: over TLS too the server speaks HTTP/1.1, even to a
// client that offers HTTP/2 and with a TLS configuration that offers it:
// HTTP/2's streams on one connection would be out of the connection
// bounds.
func TestHTTP1Only(t *testing.T) {
	ts := httptest.NewUnstartedServer(nil) // for its certificate and a client that trusts it
	ts.EnableHTTP2 = true
	ts.StartTLS()
	client, cfg := ts.Client(), ts.TLS.Clone()
	ts.Close()
	cfg.NextProtos = []string{"h2", "http/1.1"}
	_, ln := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) }), Limits{}, Options{TLS: cfg})
	client.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	res, err := client.Get("https://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.ProtoMajor != 1 || string(body) != "HTTP/1.1" {
		t.Errorf("a client offering h2 was answered over %s (%q), want HTTP/1.1", res.Proto, body)
	}
}
