package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/logservice"
)

// Peak RSS bounds the flood tests assert, in KiB: LIMITATIONS.md states
// them (Servers).
const (
	witnessPeakRSSKiB = 96 << 10
	ledgerPeakRSSKiB  = 96 << 10
	writerPeakRSSKiB  = 192 << 10
	// bundlePeakRSSKiB bounds ledger serve holding --max-answer-mib of
	// large bundles for slow readers (floodBigBundles).
	bundlePeakRSSKiB = 112 << 10
)

// Numbers of the HTTP floods. The server runs with --max-per-client at
// --max-in-flight (as behind a proxy): one client, loopback's only
// address, may then take every slot, which is the most memory a server
// can be made to hold.
const (
	floodInFlight  = 64  // --max-in-flight, --max-per-client
	floodConns     = 256 // --max-conns (and so the connections per client)
	floodSlowloris = 180 // clients that send their headers one byte at a time
	floodOversized = 20  // clients whose Content-Length is past the body limit
)

// httpServer is a started writ HTTP server under test.
type httpServer struct {
	pid  int
	addr string
	// good is a well-behaved request and the status and body prefix it
	// must get.
	good func() *http.Request
	want int
	// slowBody, when true, means the server reads request bodies, so a
	// slow body holds a slot in flight; maxBody is the body limit then.
	slowBody bool
	maxBody  int
	path     string // what the flood requests
	rssKiB   int64  // the peak RSS bound
}

// TestServeFlood floods witness serve and ledger serve with slowloris,
// slow-body and oversized clients, and ledger serve with clients that do
// not read large answers (floodBigBundles): a well-behaved client is
// still served, the clients past each limit are refused with the exact
// status, text and Retry-After, and the server's peak RSS stays under its
// stated bound.
func TestServeFlood(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) httpServer
	}{
		{"witness serve", startWitnessServe},
		{"ledger serve", startLedgerServe},
		{"ledger serve --write", startWriterServe},
	} {
		t.Run(tc.name, func(t *testing.T) { floodHTTP(t, tc.start(t)) })
	}
	t.Run("ledger serve, slow readers of large bundles", floodBigBundles)
}

func floodHTTP(t *testing.T, s httpServer) {
	// Slowloris: headers one byte at a time; each holds a connection
	// (not a slot) until --read-timeout cuts it.
	slow := dialAll(t, "tcp", s.addr, floodSlowloris, []byte("POST "+s.path+" HTTP/1.1\r\nHost: x\r\nX-Slow: "))
	// Oversized: refused 413 from their Content-Length, before any slot.
	big := dialAll(t, "tcp", s.addr, floodOversized, []byte(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", s.path, 64<<20)))
	wantBig := answer{status: 413, body: fmt.Sprintf("request too large (max-body-bytes): the body is over %d bytes, this server's limit for one request\n", bodyLimit(s))}
	if n, _ := countAnswers(t, "oversized", readAnswers(big, 5*time.Second), wantBig); n != floodOversized {
		t.Errorf("%d of %d oversized requests refused 413", n, floodOversized)
	}
	for _, c := range big {
		c.Close()
	}
	time.Sleep(700 * time.Millisecond) // net/http keeps a refused connection 500 ms (its RST avoidance)
	// Slow bodies: all but 8 bodies' worth of the body budget
	// (--max-in-flight × the body limit), each most of a maximal body sent
	// and stalled: the server holds what they sent, and no slot in flight.
	var bodies []net.Conn
	var first []byte
	if s.slowBody {
		head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", s.path, s.maxBody)
		first = append([]byte(head), bytes.Repeat([]byte("x"), s.maxBody-1024)...)
		bodies = dialAll(t, "tcp", s.addr, floodInFlight-8, first)
	}
	time.Sleep(300 * time.Millisecond) // the handlers are reading
	http.DefaultClient.CloseIdleConnections()
	for i := range 3 { // within the limits: served
		res, err := http.DefaultClient.Do(s.good())
		if err != nil {
			t.Fatalf("well-behaved request %d: %v", i, err)
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		res.Body.Close()
		if res.StatusCode != s.want {
			t.Fatalf("well-behaved request %d during the flood: %s %q, want %d", i, res.Status, body, s.want)
		}
	}
	if s.slowBody { // the rest of the budget, then one past it
		more := dialAll(t, "tcp", s.addr, 8, first)
		time.Sleep(300 * time.Millisecond)
		past := dialAll(t, "tcp", s.addr, 4, []byte(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx", s.path)))
		want := answer{status: 503, retry: "1", body: fmt.Sprintf("busy (max-body-buffer): request bodies being received hold %d bytes, the limit (--max-in-flight × the body limit); retry after 1s\n", floodInFlight*s.maxBody)}
		if n, _ := countAnswers(t, "past the body budget", readAnswers(past, 5*time.Second), want); n != len(past) {
			t.Errorf("%d of %d requests past the body budget refused 503", n, len(past))
		}
		bodies = append(bodies, more...)
	}
	// Connections past --max-conns are refused on the raw connection,
	// before a byte is read.
	held := floodSlowloris + len(bodies)
	extra := dialAll(t, "tcp", s.addr, floodConns-held+20, nil)
	want := answer{status: 503, retry: "1", body: fmt.Sprintf("busy (max-conns): %d connections open, the limit set by --max-conns; retry after 1s\n", floodConns)}
	if n, silent := countAnswers(t, "past --max-conns", readAnswers(extra, time.Second), want); n < 20 || silent > floodConns-held {
		t.Errorf("%d connections past --max-conns refused 503, %d held; want at least 20 refused", n, silent)
	}
	for _, c := range slow[:10] { // still held, not answered: one more byte each
		c.Write([]byte("y"))
	}
	checkPeakRSS(t, s.pid, s.rssKiB, fmt.Sprintf("%d slowloris, %d slow bodies, %d oversized", floodSlowloris, len(bodies), floodOversized))
}

// bodyLimit is the body bytes s accepts.
func bodyLimit(s httpServer) int {
	if s.slowBody {
		return s.maxBody
	}
	return maxLogRequestBody
}

// floodArgs are the limit flags of the HTTP floods.
func floodArgs() []string {
	return []string{"--max-in-flight", fmt.Sprint(floodInFlight), "--max-per-client", fmt.Sprint(floodInFlight), "--max-conns", fmt.Sprint(floodConns)}
}

// startLedgerServe starts ledger serve on a new ledger.
func startLedgerServe(t *testing.T) httpServer {
	dir := t.TempDir()
	writIn(t, dir, "key", "generate", "--out", "root", "--work-factor", "10")
	writIn(t, dir, "root", "sign", "--key", "root.key", "--pub", "root.pub", "--threshold", "1", "--expires", "8760h", "--out", "root.cose")
	writIn(t, dir, "ledger", "init", "--dir", "L", "--root", "root.cose", "--origin", "example.com/flood", "--work-factor", "10")
	cmd := startServer(t, dir, append([]string{"ledger", "serve", "--dir", "L", "--listen", "127.0.0.1:0", "--addr-file", "addr"}, floodArgs()...)...)
	addr := waitAddr(t, filepath.Join(dir, "addr"))
	return httpServer{pid: cmd.Process.Pid, addr: addr, path: "/checkpoint", want: 200, rssKiB: ledgerPeakRSSKiB,
		good: func() *http.Request { r, _ := http.NewRequest("GET", "http://"+addr+"/checkpoint", nil); return r }}
}

// startWitnessServe starts witness serve for a new ledger's log; the
// well-behaved client submits the ledger's checkpoint (cosigned again
// each time).
func startWitnessServe(t *testing.T) httpServer {
	dir := t.TempDir()
	writIn(t, dir, "witness", "key", "generate", "--name", "witness.example/flood", "--out", "w", "--work-factor", "10")
	writIn(t, dir, "key", "generate", "--out", "root", "--work-factor", "10")
	writIn(t, dir, "root", "sign", "--key", "root.key", "--pub", "root.pub", "--threshold", "1", "--expires", "8760h", "--out", "root.cose")
	writIn(t, dir, "ledger", "init", "--dir", "L", "--root", "root.cose", "--origin", "example.com/flood", "--work-factor", "10")
	vkey := strings.TrimSpace(writIn(t, dir, "ledger", "vkey", "--dir", "L"))
	cp := writIn(t, dir, "ledger", "checkpoint", "--dir", "L")
	if err := os.WriteFile(filepath.Join(dir, "cp"), []byte(cp), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := startServer(t, dir, append([]string{"witness", "serve", "--key", "w.key", "--dir", "WD", "--listen", "127.0.0.1:0", "--addr-file", "addr", "--log", vkey}, floodArgs()...)...)
	addr := waitAddr(t, filepath.Join(dir, "addr"))
	// The first cosignature; the flood's well-behaved client then submits
	// the same checkpoint from the size it holds.
	writIn(t, dir, "witness", "add-checkpoint", "--url", "http://"+addr, "--old", "0", "cp")
	size := strings.Split(cp, "\n")[1]
	return httpServer{pid: cmd.Process.Pid, addr: addr, path: "/add-checkpoint", want: 200, slowBody: true, maxBody: witness.MaxRequestSize, rssKiB: witnessPeakRSSKiB,
		good: func() *http.Request {
			r, _ := http.NewRequest("POST", "http://"+addr+"/add-checkpoint", strings.NewReader("old "+size+"\n\n"+cp))
			return r
		}}
}

// startWriterServe starts ledger serve --write on a new ledger (a root
// and an operator's delegation); the well-behaved client submits a new
// instruction each time, which is appended.
func startWriterServe(t *testing.T) httpServer {
	w := newCrashWorld(t, "example.com/writer-flood")
	cmd := startServer(t, w.dir, append([]string{"ledger", "serve", "--write", "--dir", "W", "--listen", "127.0.0.1:0", "--addr-file", "addr"}, floodArgs()...)...)
	addr := waitAddr(t, filepath.Join(w.dir, "addr"))
	waitReady(t, &http.Client{}, "http://"+addr)
	_, recs := w.batch(3)
	next := 3 // the batch's instructions, after its delegation, quarantine and pin
	return httpServer{pid: cmd.Process.Pid, addr: addr, path: logservice.AddPath, want: 200, slowBody: true, maxBody: logservice.DefaultMaxBodyBytes, rssKiB: writerPeakRSSKiB,
		good: func() *http.Request {
			r, _ := http.NewRequest("POST", "http://"+addr+logservice.AddPath, bytes.NewReader(recs[next]))
			r.Header.Set("Content-Type", logservice.ContentTypeRecord)
			next++
			return r
		}}
}
