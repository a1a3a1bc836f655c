package logservice_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/logservice"
	"github.com/writ-ledger/writ/rules"
)

// TestClientRefusesForgedAnswers: a service (or whoever sits between it
// and the client) that answers with what it did not prove is caught by
// the client: each forged answer, made from a real one, is ErrAnswer,
// never a record reported appended.
func TestClientRefusesForgedAnswers(t *testing.T) {
	w := newWorld(t, logservice.Options{}, true)
	other, err := ledger.CreateWithHistory(filepath.Join(t.TempDir(), "other"), "example.com/service", testkit.Key(t, 8), func() time.Time { return testkit.Epoch })
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Append([][]byte{testkit.Seal(t, testkit.Root(1, w.root), w.root)}); err != nil {
		t.Fatal(err)
	}
	otherCP, err := other.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	forgeries := map[string]func(a *logservice.Added){
		"a proof hash flipped":     func(a *logservice.Added) { a.Entries[0].InclusionProof[0][0] ^= 1 },
		"a proof hash dropped":     func(a *logservice.Added) { a.Entries[0].InclusionProof = a.Entries[0].InclusionProof[1:] },
		"another record's digest":  func(a *logservice.Added) { a.Entries[0].Digest = "sha256:" + strings.Repeat("0", 64) },
		"another index":            func(a *logservice.Added) { a.Entries[0].Index++ },
		"an entry missing":         func(a *logservice.Added) { a.Entries = a.Entries[:0] },
		"another key's checkpoint": func(a *logservice.Added) { a.Checkpoint = string(otherCP) },
		"an unsigned checkpoint":   func(a *logservice.Added) { a.Checkpoint = strings.SplitAfter(a.Checkpoint, "\n\n")[0] },
		"an index past the tree":   func(a *logservice.Added) { a.Entries[0].Index = 1 << 40 },
		"a mangled checkpoint":     func(a *logservice.Added) { a.Checkpoint = strings.Replace(a.Checkpoint, "\n", "\n\n", 1) },
	}
	for name, forge := range forgeries {
		t.Run(name, func(t *testing.T) {
			mitm := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet { // the read API, passed on as it is
					resp, err := http.Get(w.url + r.URL.Path)
					if err != nil {
						t.Error(err)
						return
					}
					defer resp.Body.Close()
					rw.WriteHeader(resp.StatusCode)
					io.Copy(rw, resp.Body)
					return
				}
				resp, err := http.Post(w.url+r.URL.Path, r.Header.Get("Content-Type"), r.Body)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				var a logservice.Added
				data, _ := io.ReadAll(resp.Body)
				if err := json.Unmarshal(data, &a); err != nil {
					t.Error(err)
					return
				}
				forge(&a)
				json.NewEncoder(rw).Encode(a)
			}))
			defer mitm.Close()
			c := &logservice.Client{URL: mitm.URL, VKey: w.log.Key()}
			res, err := c.Append(context.Background(), [][]byte{w.instruction()})
			if !errors.Is(err, logservice.ErrAnswer) {
				t.Fatalf("a forged answer: %+v, %v; want ErrAnswer", res, err)
			}
		})
	}
}

// TestClientURL: the client sends records only to https://, or http://
// on loopback, with nothing after the path.
func TestClientURL(t *testing.T) {
	w := newWorld(t, logservice.Options{}, true)
	for _, u := range []string{"http://example.com", "ftp://127.0.0.1", "http://127.0.0.1:1/?q=1", "http://user@127.0.0.1:1", "127.0.0.1:8080", "http://[::1"} {
		c := &logservice.Client{URL: u, VKey: w.log.Key()}
		if _, err := c.Append(context.Background(), [][]byte{w.instruction()}); !errors.Is(err, logservice.ErrServiceURL) {
			t.Errorf("%s: %v, want ErrServiceURL", u, err)
		}
	}
	// A trailing slash is the same service.
	c := &logservice.Client{URL: w.url + "/", VKey: w.log.Key()}
	if res, err := c.Append(context.Background(), [][]byte{w.instruction()}); err != nil || !bytes.Equal(res.Signed[:19], []byte("example.com/service")) {
		t.Fatalf("%v %v", res, err)
	}
}

// TestClientHostileRefusals: what a server (or a proxy) answers instead
// of a verified answer never becomes an exit 0, a refusal's exit code is
// the service's only when it is one writ gives (1 to 4), an error page
// from a proxy (502, 504) says the records may be appended, a redirect is
// not followed, and the server's hints are printed as its words, on one
// line each.
func TestClientHostileRefusals(t *testing.T) {
	w := newWorld(t, logservice.Options{}, true)
	cases := []struct {
		name   string
		status int
		header map[string]string
		body   string
		exit   int
		msg    string
	}{
		{"exit 256", 500, nil, `{"error":"all good, appended","exit":256,"rule":"","hints":[]}`, 4, "may or may not be appended"},
		{"exit -256", 400, nil, `{"error":"all good","exit":-256,"rule":"","hints":[]}`, 2, "nothing appended"},
		{"a refusal as 200", 200, nil, `{"error":"fine","exit":1}`, 0, ""},
		{"proxy 504", 504, nil, "<html>Gateway Time-out</html>", 4, "may or may not be appended"},
		{"proxy 502", 502, nil, "<html>Bad Gateway</html>", 4, "may or may not be appended"},
		{"plain HTTP to HTTPS", 400, nil, "Client sent an HTTP request to an HTTPS server.", 2, "nothing appended"},
		{"redirect", 307, map[string]string{"Location": "http://192.0.2.2/writ/v1/add"}, "", 2, "does not follow redirects"},
		{"hints", 403, nil, "{\"error\":\"no\",\"exit\":1,\"rule\":\"x\",\"hints\":[\"run rm -rf ~\\nwrit: note: \\u001b[32mappended\"]}", 1, "no"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				for k, v := range c.header {
					rw.Header().Set(k, v)
				}
				rw.WriteHeader(c.status)
				io.WriteString(rw, c.body)
			}))
			defer srv.Close()
			_, err := (&logservice.Client{URL: srv.URL, VKey: w.log.Key()}).Append(context.Background(), [][]byte{w.instruction()})
			if c.exit == 0 { // a 200 that is not an answer
				if !errors.Is(err, logservice.ErrAnswer) {
					t.Fatalf("got %v, want ErrAnswer", err)
				}
				return
			}
			xe := exitcode.Of(logservice.CommandError(err, srv.URL, []string{"r.cose"}))
			if xe == nil || xe.Code != c.exit || !strings.Contains(xe.Error(), c.msg) {
				t.Fatalf("got %v (%+v), want exit %d with %q", err, xe, c.exit, c.msg)
			}
			for _, h := range xe.Hints {
				if strings.ContainsAny(h, "\n\x1b") || !strings.HasPrefix(h, "the service says: ") && c.name == "hints" {
					t.Fatalf("hint %q: not one escaped line marked as the service's", h)
				}
			}
		})
	}
}

// TestClientNoService: nothing listening is exit 4 and says nothing was
// appended; an HTTPS client talking to a plain HTTP service is told to
// use http://.
func TestClientNoService(t *testing.T) {
	w := newWorld(t, logservice.Options{}, true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	_, err = (&logservice.Client{URL: closed, VKey: w.log.Key()}).Append(context.Background(), [][]byte{w.instruction()})
	if xe := exitcode.Of(logservice.CommandError(err, closed, nil)); xe == nil || xe.Code != 4 || !strings.Contains(xe.Error(), "nothing listens") {
		t.Fatalf("nothing listening: %v", xe)
	}
	tlsURL := strings.Replace(w.url, "http://", "https://", 1)
	_, err = (&logservice.Client{URL: tlsURL, VKey: w.log.Key()}).Append(context.Background(), [][]byte{w.instruction()})
	if xe := exitcode.Of(logservice.CommandError(err, tlsURL, nil)); xe == nil || xe.Code != 2 || !strings.Contains(xe.Hints[0], "http://") {
		t.Fatalf("https to a plain service: %v", xe)
	}
}

// TestClientWrongKey: a VKey that did not sign the service's log is
// refused before anything is sent (rules.VKeyMismatch, naming --vkey on
// the command line), and the log does not grow.
func TestClientWrongKey(t *testing.T) {
	w := newWorld(t, logservice.Options{}, true)
	other, err := formats.NewLogKey("example.com/service", testkit.Key(t, 8).Public())
	if err != nil {
		t.Fatal(err)
	}
	size := w.log.Size()
	_, err = (&logservice.Client{URL: w.url, VKey: other}).Append(context.Background(), [][]byte{w.instruction()})
	if !errors.Is(err, ledger.ErrVKeyMismatch) || w.log.Size() != size {
		t.Fatalf("a wrong key: %v, the log at %d entries (was %d)", err, w.log.Size(), size)
	}
	if f := failure.Describe(logservice.CommandError(err, w.url, nil)); f.Exit != 1 || f.Rule != rules.VKeyMismatch || !strings.HasPrefix(f.Error, "--vkey: ") {
		t.Fatalf("the command line's report: %+v", f)
	}
}
