package httpbound

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRefusals: each limit's refusal, its exact status, Retry-After and
// text, from the handler (clients told apart by their remote address).
func TestRefusals(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	s, err := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			entered <- struct{}{}
			<-release
		}
		if _, err := io.ReadAll(r.Body); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				http.Error(w, "read past the limit", http.StatusRequestEntityTooLarge)
				return
			}
		}
		io.WriteString(w, "ok")
	}), Limits{MaxInFlight: 3, MaxPerClient: 2, MaxBodyBytes: 10}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, from := range []string{"10.0.0.1:1", "10.0.0.1:2", "10.0.0.2:1"} { // a holds 2, b 1: all 3 slots
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.http.Handler.ServeHTTP(httptest.NewRecorder(), request(from, "/hold", ""))
		}()
		<-entered
	}
	tests := []struct {
		name, from, path, body string
		status                 int
		retry, text            string
	}{
		{"client a past its limit", "10.0.0.1:3", "/", "", 429, "1", "too many requests (max-per-client): 10.0.0.1 has 2 in flight, the limit set by --max-per-client; retry after 1s\n"},
		{"client c past the total", "10.0.0.3:1", "/", "", 503, "1", "busy (max-in-flight): 3 requests in flight, the limit set by --max-in-flight; retry after 1s\n"},
		{"a body too large, even when busy", "10.0.0.3:1", "/", "01234567890", 413, "", "request too large (max-body-bytes): the body is over 10 bytes, this server's limit for one request\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s.http.Handler.ServeHTTP(rec, request(tc.from, tc.path, tc.body))
			if rec.Code != tc.status || rec.Header().Get("Retry-After") != tc.retry || rec.Body.String() != tc.text {
				t.Errorf("answer %d, Retry-After %q, %q; want %d, %q, %q", rec.Code, rec.Header().Get("Retry-After"), rec.Body, tc.status, tc.retry, tc.text)
			}
		})
	}
	close(release)
	wg.Wait()
	t.Run("within the limits again, a chunked body read past the limit", func(t *testing.T) {
		rec := httptest.NewRecorder()
		r := request("10.0.0.1:4", "/", "01234567890")
		r.ContentLength = -1
		s.http.Handler.ServeHTTP(rec, r)
		want := "request too large (max-body-bytes): the body is over 10 bytes, this server's limit for one request\n"
		if rec.Code != 413 || rec.Body.String() != want {
			t.Errorf("answer %d %q; want 413 %q, the body read before the handler", rec.Code, rec.Body, want)
		}
	})
}

func request(from, path, body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.RemoteAddr = from
	return r
}

// TestConnectionLimits: on a real loopback listener, a client past its
// connections is answered 429 on the raw connection and closed; a
// connection closed gives its place back.
func TestConnectionLimits(t *testing.T) {
	s, ln := serveLoopback(t, http.NotFoundHandler(), Limits{MaxConns: 8, MaxInFlight: 2, MaxPerClient: 1})
	var conns []net.Conn
	for range s.Limits().MaxConnsPerClient + 1 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	last := conns[len(conns)-1]
	last.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(last), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	want := "too many connections (max-conns-per-client): 127.0.0.1 has 4 open, the limit per client (4 × --max-per-client); retry after 1s\n"
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "1" || string(body) != want {
		t.Errorf("answer %d, Retry-After %q, %q; want 429, 1, %q", res.StatusCode, res.Header.Get("Retry-After"), body, want)
	}
	conns[0].Close()
	time.Sleep(100 * time.Millisecond)
	res2, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil || res2.StatusCode != http.StatusNotFound {
		t.Fatalf("a connection after one closed: %v, %v; want the handler's 404", res2, err)
	}
	res2.Body.Close()
}

// TestCounter: the total's refusal, the per-client one, and a per-client
// limit equal to the total, which is none.
func TestCounter(t *testing.T) {
	c := newCounter(2, 1)
	if c.acquire("a") != nil || c.acquire("a") != errClient || c.acquire("b") != nil || c.acquire("c") != errTotal {
		t.Fatal("counter(2, 1): want a, a refused per client, b, c refused in total")
	}
	c.release("a")
	if c.acquire("c") != nil || len(c.byClient) != 2 {
		t.Fatalf("after a release: c refused, or %d clients held (want 2)", len(c.byClient))
	}
	same := newCounter(2, 2)
	for i, want := range []error{nil, nil, errTotal} {
		if got := same.acquire("a"); got != want {
			t.Errorf("counter(2, 2), acquire %d: %v, want %v", i, got, want)
		}
	}
}

// TestLimitsInvalid: bad limits are ErrLimits, naming the flag.
func TestLimitsInvalid(t *testing.T) {
	for _, tc := range []struct {
		l    Limits
		want string
	}{
		{Limits{MaxInFlight: -1}, "invalid server limits: --max-in-flight is negative"},
		{Limits{MaxInFlight: 4, MaxPerClient: 5}, "invalid server limits: --max-per-client 5 is above --max-in-flight 4"},
		{Limits{MaxConns: 8, MaxInFlight: 9}, "invalid server limits: --max-in-flight 9 is above --max-conns 8 (each request in flight holds a connection)"},
		{Limits{MaxConns: 1 << 46, MaxInFlight: 1 << 46, MaxBodyBytes: 128 << 10}, "invalid server limits: --max-in-flight 70368744177664 or the body limit 131072 is past 2147483647 (their product bounds the bodies held)"},
	} {
		_, err := New(http.NotFoundHandler(), tc.l, Options{})
		if !errors.Is(err, ErrLimits) || err.Error() != tc.want {
			t.Errorf("New(%+v): %v; want %q", tc.l, err, tc.want)
		}
	}
}

// serveLoopback serves h under l (with opts[0], when given) on a new
// loopback listener until the test ends.
func serveLoopback(t *testing.T, h http.Handler, l Limits, opts ...Options) (*Server, net.Listener) {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	s, err := New(h, l, o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return s, ln
}
