package logservice_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/logservice"
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
