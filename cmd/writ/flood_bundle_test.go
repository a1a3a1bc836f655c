package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// Numbers of the big-bundle flood: a full tile of instructions with
// maximal briefs (an entry bundle of about 8.4 MB), and as many clients
// asking for it as --max-in-flight lets in, each with a 4 KiB receive
// buffer and never reading.
const (
	bigEntries     = tiles.Width
	bigSlowClients = floodInFlight
)

// floodBigBundles floods ledger serve with clients that ask for
// a large entry bundle (half of them gzipped) and never read it. Without
// a bound on the answers held, each pins its whole bundle for the write
// timeout (64 × 8.4 MB); with --max-answer-mib the server's peak RSS
// stays under its stated bound, the requests past the budget are refused
// 503 with Retry-After, a well-behaved client is answered (200, or 503 or
// 429 with Retry-After) within 3 s, and it is served once the slow
// readers are cut off by the minimum write rate.
func floodBigBundles(t *testing.T) {
	dir := t.TempDir()
	bundle := bigLedger(t, dir)
	cmd := startServer(t, dir, append([]string{"ledger", "serve", "--dir", "L", "--listen", "127.0.0.1:0", "--addr-file", "addr"}, floodArgs()...)...)
	addr := waitAddr(t, filepath.Join(dir, "addr"))
	var slow []net.Conn
	for i := range bigSlowClients {
		gzip := ""
		if i%2 == 1 {
			gzip = "Accept-Encoding: gzip\r\n"
		}
		slow = append(slow, dialSlowReader(t, addr, "GET /tile/entries/000 HTTP/1.1\r\nHost: x\r\n"+gzip+"\r\n"))
	}
	time.Sleep(time.Second) // the server reads the bundles and fills the sockets' buffers
	served := goodBundleClient(t, "http://"+addr+"/tile/entries/000", bundle)
	refusal := fmt.Sprintf("busy (max-answer-mib): the answers in flight hold %d MiB, the limit set by --max-answer-mib; retry after 1s\n", publish.DefaultMaxAnswerBytes>>20)
	var ok, refused int
	for i, a := range readAnswers(slow, 2*time.Second) {
		switch {
		case a.status == http.StatusOK:
			ok++
		case a.status == http.StatusServiceUnavailable && a.retry == "1" && a.body == refusal:
			refused++
		case a.status != 0:
			t.Errorf("slow client %d: answer %d, Retry-After %q, %q; want 200 or 503 %q", i, a.status, a.retry, a.body, refusal)
		}
	}
	if ok == 0 || refused == 0 {
		t.Errorf("%d slow clients answered 200 and %d refused past --max-answer-mib; want some of each", ok, refused)
	}
	checkPeakRSS(t, cmd.Process.Pid, bundlePeakRSSKiB, fmt.Sprintf("%d clients not reading a %d-byte bundle (%d served, %d refused; well-behaved client served after %s)",
		bigSlowClients, len(bundle), ok, refused, served.Round(100*time.Millisecond)))
}

// bigLedger makes a ledger at dir/L whose first entry bundle is a full
// tile of signed instructions with briefs of schemas.MaxBrief bytes, and
// returns the bundle.
func bigLedger(t *testing.T, dir string) []byte {
	t.Helper()
	for _, args := range [][]string{
		{"key", "generate", "--out", "root", "--work-factor", "10"},
		{"key", "generate", "--out", "op", "--work-factor", "10"},
		{"root", "sign", "--key", "root.key", "--pub", "root.pub", "--threshold", "1", "--expires", "8760h", "--out", "root.cose"},
		{"ledger", "init", "--dir", "L", "--root", "root.cose", "--origin", "example.com/flood", "--work-factor", "10"},
		{"delegate", "--key", "root.key", "--to", "op.pub", "--action", "instruct", "--stream", "team/*", "--machine", "runner-1", "--not-after", "720h", "--out", "op.del"},
		{"ledger", "append", "--dir", "L", "op.del"},
	} {
		writIn(t, dir, args...)
	}
	id, err := sign.ScryptIdentity([]byte(floodPassphrase))
	if err != nil {
		t.Fatal(err)
	}
	key, err := sign.LoadPrivateKey(filepath.Join(dir, "op.key"), id)
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	var batch []string
	for i := range bigEntries - 1 { // the delegation is entry 0
		brief := make([]byte, schemas.MaxBrief/2)
		for j := range brief {
			brief[j] = byte(rnd.Uint32())
		}
		rec := &schemas.Instruction{V: schemas.SchemaVersion, ID: fmt.Sprintf("%032x", i), Stream: "team/a", Machine: "runner-1",
			Agent: schemas.ArtifactRef{Name: "agent"}, Brief: hex.EncodeToString(brief), Transport: "ssh",
			IssuedAt: now.Unix(), NotBefore: now.Unix(), Expires: now.Add(time.Hour).Unix()}
		payload, err := schemas.Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		signed, err := sign.Sign(rec.Kind(), payload, key)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("i%03d.cose", i)
		if err := os.WriteFile(filepath.Join(dir, name), signed, 0o644); err != nil {
			t.Fatal(err)
		}
		if batch = append(batch, name); len(batch) == 40 || i == bigEntries-2 { // under ledger.MaxBatchBytes
			writIn(t, dir, append([]string{"ledger", "append", "--dir", "L"}, batch...)...)
			batch = nil
		}
	}
	l, err := ledgerdir.OpenAuthority(filepath.Join(dir, "L"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	bundle, err := l.ReadTile(tiles.Tile{Kind: tiles.KindEntries, Level: -1, N: 0, W: tiles.Width}, bigEntries)
	if err != nil {
		t.Fatal(err)
	}
	return bundle
}

// dialSlowReader connects to addr with a 4 KiB receive buffer, sends
// request, and never reads.
func dialSlowReader(t *testing.T, addr, request string) net.Conn {
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
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	return c
}

// goodBundleClient asks url for bundle as a well-behaved client: each
// answer must come within 3 s, a refusal (503 or 429) with Retry-After,
// after which it asks again; it must be served bundle within 30 s (10
// times both in a race build, which is that much slower). It returns how
// long that took.
func goodBundleClient(t *testing.T, url string, bundle []byte) time.Duration {
	t.Helper()
	prompt, within := 3*time.Second, 30*time.Second
	if raceBuild {
		prompt, within = 10*prompt, 10*within
	}
	start := time.Now()
	client := &http.Client{Timeout: within}
	for {
		asked := time.Now()
		res, err := client.Get(url)
		if err != nil {
			t.Fatalf("well-behaved client: %v", err)
		}
		answered := time.Since(asked)
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if answered > prompt {
			t.Errorf("well-behaved client: answered %s after %s, want within %s", res.Status, answered.Round(time.Millisecond), prompt)
		}
		switch {
		case res.StatusCode == http.StatusOK && err == nil && string(body) == string(bundle):
			return time.Since(start)
		case (res.StatusCode == http.StatusServiceUnavailable || res.StatusCode == http.StatusTooManyRequests) && res.Header.Get("Retry-After") == "1":
		default:
			t.Fatalf("well-behaved client: %s, Retry-After %q, %d bytes (%v): %q", res.Status, res.Header.Get("Retry-After"), len(body), err, strings.TrimSpace(string(body[:min(len(body), 200)])))
		}
		if time.Since(start) > within {
			t.Errorf("well-behaved client: not served within %s", within)
			return time.Since(start)
		}
		time.Sleep(time.Second)
	}
}
