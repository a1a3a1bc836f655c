package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/internal/testkit"
)

// admissionPeakRSSKiB is the peak RSS bound of admission serve under the
// flood, in KiB; LIMITATIONS.md states it (Servers).
const admissionPeakRSSKiB = 128 << 10

// TestAdmissionServeFlood floods admission serve over its UNIX socket
// from this process: slow clients holding most of a maximal request,
// oversized requests, and a few hundred more past --max-per-client. Those
// are answered busy at once, on the wire, naming the flag; a well-behaved
// client (writ admission request, another process) is still admitted;
// the server's peak RSS stays under its stated bound.
func TestAdmissionServeFlood(t *testing.T) {
	dir := t.TempDir()
	// Its own agent: buildAgent's lives in the first caller's temporary
	// directory, which the scripts share.
	if err := copyFile(testkit.BuildAgent(t, testkit.BuildOptions{}), filepath.Join(dir, "agent")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"key", "generate", "--out", "root", "--work-factor", "10"},
		{"key", "generate", "--out", "op", "--work-factor", "10"},
		{"key", "generate", "--out", "rel", "--work-factor", "10"},
		{"root", "sign", "--key", "root.key", "--pub", "root.pub", "--threshold", "1", "--expires", "8760h", "--out", "root.cose"},
		{"ledger", "init", "--dir", "L", "--root", "root.cose", "--origin", "example.com/flood", "--work-factor", "10"},
		{"delegate", "--key", "root.key", "--to", "op.pub", "--action", "instruct", "--stream", "team/*", "--machine", "runner-1", "--not-after", "720h", "--out", "op.del"},
		{"delegate", "--key", "root.key", "--to", "rel.pub", "--action", "pin", "--artifact", "agent", "--not-after", "720h", "--out", "rel.del"},
		{"pin", "--key", "rel.key", "--artifact", "agent", "--version", "1.0.0", "--out", "agent.pin", "agent"},
		{"ledger", "append", "--dir", "L", "op.del", "rel.del", "agent.pin"},
		{"instruct", "--key", "op.key", "--stream", "team/a", "--machine", "runner-1", "--agent", "agent", "--out", "d.cose"},
	} {
		writIn(t, dir, args...)
	}
	const maxInFlight, perClient = 64, 60
	sock := filepath.Join(dir, "s.sock")
	cmd := startServer(t, dir, "admission", "serve", "--ledger", "L", "--machine", "runner-1", "--mode", "enforce", "--socket", sock,
		"--max-in-flight", fmt.Sprint(maxInFlight), "--max-per-client", fmt.Sprint(perClient))
	waitSocket(t, sock)

	// Oversized: cut at MaxRequestSize and rejected as malformed.
	over := bytes.Repeat([]byte("A"), admission.MaxRequestSize+100<<10)
	wantOver := fmt.Sprintf(`{"error":"request: unexpected EOF (one JSON object of at most %d bytes)","run":false}`, admission.MaxRequestSize)
	for i, got := range sendAll(t, sock, 20, append([]byte(`{"dispatch":"`), over...)) {
		if got != wantOver {
			t.Errorf("oversized request %d: answer %q, want %q", i, got, wantOver)
		}
	}
	// Slow: most of a maximal request, then nothing; each holds a slot
	// (and what it sent) until --read-timeout.
	partial := append([]byte(`{"dispatch":"`), bytes.Repeat([]byte("A"), admission.MaxRequestSize-1024)...)
	held := dialAll(t, "unix", sock, perClient, partial)
	time.Sleep(300 * time.Millisecond)
	// A few hundred more from this process: busy at once, unread.
	wantBusy := fmt.Sprintf(`{"error":"busy (max-per-client): this client process has %d requests in flight, the limit set by --max-per-client; retry after 1s","retry_after":1,"run":false}`, perClient)
	for i, got := range sendAll(t, sock, 240, []byte(`{"dispatch":"AAE=","agent_binary":"/a"}`)) {
		if got != wantBusy {
			t.Fatalf("request %d past --max-per-client: answer %q, want %q", i, got, wantBusy)
		}
	}
	// A well-behaved client, another process: admitted.
	if out := writIn(t, dir, "--json", "admission", "request", "--socket", sock, "--agent-binary", "agent", "d.cose"); !strings.Contains(out, `"run":true`) || !strings.Contains(out, `"verdict":"admitted"`) {
		t.Errorf("well-behaved request during the flood: %s", out)
	}
	for _, c := range held[:5] { // still held, not answered
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if n, err := c.Read(make([]byte, 1)); n != 0 || !os.IsTimeout(err) {
			t.Errorf("a slow client was answered (%d bytes, %v) before --read-timeout", n, err)
		}
	}
	checkPeakRSS(t, cmd.Process.Pid, admissionPeakRSSKiB, fmt.Sprintf("%d slow, 20 oversized and 240 busy clients", perClient))
}

// sendAll sends msg on n connections to the UNIX socket at sock at once
// and returns each answer's first line.
func sendAll(t *testing.T, sock string, n int, msg []byte) []string {
	t.Helper()
	out := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			go c.Write(msg) // fails once the server closes
			line, _ := bufio.NewReader(c).ReadString('\n')
			out[i] = strings.TrimSuffix(line, "\n")
		}()
	}
	wg.Wait()
	return out
}

// waitSocket waits up to 20 s for a server on the UNIX socket at path.
func waitSocket(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("no server on %s within 20 s", path)
}
