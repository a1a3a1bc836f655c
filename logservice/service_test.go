package logservice_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/writ-ledger/writ/internal/httpbound"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/logservice"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
)

// world is an authority log (root, and a delegation to op for instruct)
// behind a Service on a loopback test server, with a client.
type world struct {
	t      *testing.T
	log    *ledger.Log
	svc    *logservice.Service
	url    string
	client *logservice.Client
	root   *sign.PrivateKey
	op     *sign.PrivateKey
	n      int
}

func newWorld(t *testing.T, opts logservice.Options, load bool) *world {
	t.Helper()
	w := &world{t: t, root: testkit.Key(t, 1), op: testkit.Key(t, 2)}
	l, err := ledger.CreateWithHistory(filepath.Join(t.TempDir(), "authority"), "example.com/service", testkit.Key(t, 9), func() time.Time { return testkit.Epoch })
	if err != nil {
		t.Fatal(err)
	}
	w.log = l
	first := [][]byte{testkit.Seal(t, testkit.Root(1, w.root), w.root),
		testkit.Seal(t, testkit.Delegation(w.op, []string{"instruct"}, "demo", "runner-1"), w.root)}
	if _, err := l.Append(first); err != nil {
		t.Fatal(err)
	}
	if w.svc, err = logservice.New(l, opts); err != nil {
		t.Fatal(err)
	}
	if load {
		if _, err := w.svc.Load(); err != nil {
			t.Fatal(err)
		}
	}
	limits := httpbound.Limits{MaxBodyBytes: w.svc.Options().MaxBodyBytes, MaxPerClient: 64, MaxInFlight: 128, MaxConns: 256}
	hs, err := httpbound.New(w.svc, limits, httpbound.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close(); w.svc.Close(); l.Close() })
	w.url = "http://" + ln.Addr().String()
	w.client = &logservice.Client{URL: w.url, VKey: l.Key()}
	return w
}

// instruction returns a new signed instruction by op.
func (w *world) instruction() []byte {
	w.n++
	return testkit.Seal(w.t, testkit.Instruction(fmt.Sprintf("%032x", w.n)), w.op)
}

// post sends body with contentType to the service's add path and
// returns the status and the decoded refusal (nil for a 200).
// A refusal that is not JSON (httpbound's line of text) is nil.
func (w *world) post(t *testing.T, contentType string, body []byte) (int, *logservice.Refusal, http.Header) {
	t.Helper()
	resp, err := http.Post(w.url+logservice.AddPath, contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, nil, resp.Header
	}
	var r logservice.Refusal
	if err := json.Unmarshal(data, &r); err != nil {
		return resp.StatusCode, nil, resp.Header
	}
	return resp.StatusCode, &r, resp.Header
}

// TestServiceAppendsAndProves: a submission of records is appended all
// together, in order, durable when answered, and the answer proves each
// into a checkpoint the log's key signed (Client.Append verified it);
// the log holds them at those indexes; the read API serves the same log.
func TestServiceAppendsAndProves(t *testing.T) {
	w := newWorld(t, logservice.Options{}, true)
	recs := [][]byte{w.instruction(), w.instruction(), w.instruction()}
	res, err := w.client.Append(context.Background(), recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 3 || res.Entries[0].Index != 2 || res.Checkpoint.Size < 5 {
		t.Fatalf("appended %+v in a checkpoint of %d", res.Entries, res.Checkpoint.Size)
	}
	for i, e := range res.Entries {
		got, err := w.log.Entry(e.Index)
		if err != nil || !bytes.Equal(got, recs[i]) || e.Kind != "instruction" {
			t.Fatalf("entry %d: %v, kind %s; not record %d", e.Index, err, e.Kind, i)
		}
	}
	resp, err := http.Get(w.url + "/checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "example.com/service\n5\n") {
		t.Fatalf("read API /checkpoint: %d %q", resp.StatusCode, body)
	}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200} {
		if resp, err := http.Get(w.url + path); err != nil || resp.StatusCode != want {
			t.Fatalf("%s: %v %v", path, resp, err)
		}
	}
}

// TestServiceRefusals: each bad submission gets its status, the CLI's
// exit code and rule, and the position of a refused record; nothing of
// it is appended, and the service goes on appending.
func TestServiceRefusals(t *testing.T) {
	w := newWorld(t, logservice.Options{MaxRecords: 4}, true)
	dup := w.instruction()
	if _, err := w.client.Append(context.Background(), [][]byte{dup}); err != nil {
		t.Fatal(err)
	}
	stranger := testkit.Seal(t, testkit.Instruction("ffffffffffffffffffffffffffffffff"), testkit.Key(t, 77))
	batch := func(recs ...[]byte) []byte {
		b, err := cbor.Marshal(recs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name, ct string
		body     []byte
		status   int
		exit     int
		rule     string
		record   int // -1: none
	}{
		{"duplicate", logservice.ContentTypeBatch, batch(w.instruction(), dup), 409, 1, "duplicate-record", 1},
		{"no authority", logservice.ContentTypeRecord, stranger, 403, 1, "unknown-key", 0},
		{"malformed record", logservice.ContentTypeRecord, []byte{0xa0}, 400, 2, "malformed-record", 0},
		{"not an array", logservice.ContentTypeBatch, []byte{0x01}, 400, 2, "", -1},
		{"trailing bytes", logservice.ContentTypeBatch, append(batch(dup), 0), 400, 2, "", -1},
		{"empty array", logservice.ContentTypeBatch, batch(), 400, 2, "", -1},
		{"too many records", logservice.ContentTypeBatch, batch(dup, dup, dup, dup, dup), 413, 2, "", -1},
		{"empty record", logservice.ContentTypeRecord, nil, 413, 1, "", -1}, // as a local append says (ledger.ErrEntrySize)
		{"record too large", logservice.ContentTypeBatch, batch(make([]byte, 70000)), 413, 1, "", -1},
		{"body too large", logservice.ContentTypeRecord, make([]byte, 2<<20), 413, 0, "", -1}, // httpbound's refusal, text
		{"media type", "text/plain", dup, 415, 2, "", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			size := w.log.Size()
			status, r, _ := w.post(t, c.ct, c.body)
			if c.exit == 0 {
				if status != c.status || r != nil {
					t.Fatalf("got %d %+v; want %d, httpbound's text", status, r, c.status)
				}
				return
			}
			if status != c.status || r == nil || r.Exit != c.exit || r.Rule != c.rule {
				t.Fatalf("got %d %+v; want %d, exit %d, rule %q", status, r, c.status, c.exit, c.rule)
			}
			if (c.record < 0) != (r.Record == nil) || (r.Record != nil && *r.Record != c.record) {
				t.Fatalf("record %v, want %d", r.Record, c.record)
			}
			if !strings.HasPrefix(r.Err, "nothing appended") && !strings.HasPrefix(r.Err, "record ") {
				t.Fatalf("message %q", r.Err)
			}
			if w.log.Size() != size {
				t.Fatalf("the log grew from %d to %d on a refusal", size, w.log.Size())
			}
		})
	}
	resp, err := http.Get(w.url + logservice.AddPath)
	if err != nil || resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Fatalf("GET %s: %v %v", logservice.AddPath, resp, err)
	}
	if _, err := w.client.Append(context.Background(), [][]byte{w.instruction()}); err != nil {
		t.Fatalf("after the refusals: %v", err)
	}
}

// TestServiceNotReady: until the state is loaded, submissions and the
// read API are 503 with Retry-After, /healthz is 200 and /readyz 503.
func TestServiceNotReady(t *testing.T) {
	w := newWorld(t, logservice.Options{}, false)
	status, r, h := w.post(t, logservice.ContentTypeRecord, w.instruction())
	if status != 503 || r.Exit != 4 || h.Get("Retry-After") == "" {
		t.Fatalf("a submission before the load: %d %+v", status, r)
	}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 503, "/checkpoint": 503} {
		if resp, err := http.Get(w.url + path); err != nil || resp.StatusCode != want {
			t.Fatalf("%s before the load: %v %v, want %d", path, resp.StatusCode, err, want)
		}
	}
	if _, err := w.svc.Load(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.client.Append(context.Background(), [][]byte{w.instruction()}); err != nil {
		t.Fatal(err)
	}
}

// TestServiceRate: past its burst a client is refused 429 with the
// Retry-After that lets it in; nothing of the refused submission is
// appended.
func TestServiceRate(t *testing.T) {
	w := newWorld(t, logservice.Options{MaxRecords: 2, Rate: 1, Burst: 3}, true)
	if _, err := w.client.Append(context.Background(), [][]byte{w.instruction(), w.instruction()}); err != nil {
		t.Fatal(err)
	}
	size := w.log.Size()
	_, err := w.client.Append(context.Background(), [][]byte{w.instruction(), w.instruction()})
	var r *logservice.Refusal
	if !errors.As(err, &r) || r.Status != 429 || r.Exit != 4 || r.RetryAfter < 1 || !strings.Contains(r.Err, "--rate") {
		t.Fatalf("past the burst: %v (%+v)", err, r)
	}
	if w.log.Size() != size {
		t.Fatal("a refused submission was appended")
	}
}

// TestServiceConcurrentSubmitters: 64 clients submitting at once are
// each answered with their own records, every one in the log exactly
// once, and a full replay of the log accepts it.
func TestServiceConcurrentSubmitters(t *testing.T) {
	w := newWorld(t, logservice.Options{}, true)
	const clients, each = 64, 8
	recs := make([][][]byte, clients)
	for c := range recs {
		for range each {
			recs[c] = append(recs[c], w.instruction())
		}
	}
	var wg sync.WaitGroup
	got := make([][]logservice.AddedEntry, clients)
	errs := make([]error, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, rec := range recs[c] {
				res, err := w.client.Append(context.Background(), [][]byte{rec})
				if err != nil {
					errs[c] = err
					return
				}
				got[c] = append(got[c], res.Entries...)
			}
		}()
	}
	wg.Wait()
	seen := map[int64]bool{}
	for c := range clients {
		if errs[c] != nil {
			t.Fatalf("client %d: %v", c, errs[c])
		}
		for i, e := range got[c] {
			if seen[e.Index] {
				t.Fatalf("index %d answered twice", e.Index)
			}
			seen[e.Index] = true
			if stored, err := w.log.Entry(e.Index); err != nil || !bytes.Equal(stored, recs[c][i]) {
				t.Fatalf("client %d record %d: entry %d is not it (%v)", c, i, e.Index, err)
			}
		}
	}
	if w.log.Size() != 2+clients*each {
		t.Fatalf("the log holds %d entries, want %d", w.log.Size(), 2+clients*each)
	}
	if _, err := w.log.Verify(w.log.Key(), nil); err != nil {
		t.Fatal(err)
	}
	// Every record was counted in exactly one group commit.
	resp, err := http.Get(w.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf("writ_log_commit_records_sum{origin=\"example.com/service\"} %d\n", clients*each); !strings.Contains(string(metrics), want) {
		t.Fatalf("/metrics lacks %q", want)
	}
	if _, err := verify.LoadAuthority(w.log, nil); err != nil {
		t.Fatal(err)
	}
}

// TestServiceRateByProxyHeader: behind a proxy on this host
// (ClientIPHeader), each of the proxy's clients has its own rate, by the
// address the proxy sets; a header that is not an address counts as the
// proxy itself.
func TestServiceRateByProxyHeader(t *testing.T) {
	w := newWorld(t, logservice.Options{MaxRecords: 2, Rate: 0.001, Burst: 2, ClientIPHeader: "X-Real-IP"}, true)
	post := func(realIP string) (int, *logservice.Refusal) {
		t.Helper()
		body, err := cbor.Marshal([][]byte{w.instruction(), w.instruction()})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", w.url+logservice.AddPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", logservice.ContentTypeBatch)
		req.Header.Set("X-Real-IP", realIP)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r logservice.Refusal
		json.NewDecoder(resp.Body).Decode(&r)
		return resp.StatusCode, &r
	}
	for i, c := range []struct {
		ip     string
		status int
	}{{"192.0.2.1", 200}, {"192.0.2.1", 429}, {"192.0.2.2", 200}, {"not an address", 200}, {"", 429}, {"::ffff:192.0.2.2", 429}} {
		status, r := post(c.ip)
		if status != c.status || (status == 429 && !strings.Contains(r.Err, "--rate")) {
			t.Fatalf("submission %d from %q: %d %+v, want %d", i, c.ip, status, r, c.status)
		}
	}
}

// TestOptionsRefused: a rate that is not a positive number, or a burst
// under one submission, is refused naming its flag.
func TestOptionsRefused(t *testing.T) {
	for _, o := range []logservice.Options{{Rate: math.NaN()}, {Rate: -1}, {Rate: math.Inf(1)}, {MaxRecords: 10, Burst: 5}, {MaxRecords: 5000}} {
		if _, err := logservice.New(nil, o); err == nil || !strings.HasPrefix(err.Error(), "--") {
			t.Errorf("%+v: %v, want a refusal naming the flag", o, err)
		}
	}
}
