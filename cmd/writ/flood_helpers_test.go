package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The flood tests start real writ servers (this test binary under the
// name writ, as the scripts run it), flood them over loopback with slow
// and oversized clients, and read the server's peak RSS (VmHWM). Each
// test is bounded in clients and in time.

// floodPassphrase unlocks the keys the flood tests make.
const floodPassphrase = "flood test passphrase"

// writIn runs writ args in dir and returns its stdout; a failure fails t.
func writIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("writ", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase, "GORACE=atexit_sleep_ms=0")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("writ %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// startServer starts writ args in dir in the background, stopped with
// SIGTERM when the test ends, and returns it.
func startServer(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("writ", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase, "GORACE=atexit_sleep_ms=0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return cmd
}

// waitAddr waits up to 20 s for a server to write its address to file.
func waitAddr(t *testing.T, file string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(file); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
	}
	t.Fatalf("no address in %s within 20 s", file)
	return ""
}

// peakRSSKiB is a live process's peak resident set size (VmHWM), in KiB.
func peakRSSKiB(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// answer is what a server sent on a connection: its status, Retry-After
// and body; status 0 when nothing came in time.
type answer struct {
	status int
	retry  string
	body   string
}

// readAnswers reads, concurrently, the answer each connection has within
// wait.
func readAnswers(conns []net.Conn, wait time.Duration) []answer {
	out := make([]answer, len(conns))
	done := make(chan struct{})
	for i, c := range conns {
		go func() {
			defer func() { done <- struct{}{} }()
			c.SetReadDeadline(time.Now().Add(wait))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
			out[i] = answer{status: res.StatusCode, retry: res.Header.Get("Retry-After"), body: string(body)}
		}()
	}
	for range conns {
		<-done
	}
	return out
}

// dialAll opens n connections to addr, writing first on each; it fails
// t when one cannot be opened.
func dialAll(t *testing.T, network, addr string, n int, first []byte) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial(network, addr)
		if err != nil {
			t.Fatalf("connection %d of %d to %s: %v", len(conns)+1, n, addr, err)
		}
		t.Cleanup(func() { c.Close() })
		if len(first) > 0 {
			c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			c.Write(first) // a refused connection may be closed already
		}
		conns = append(conns, c)
	}
	return conns
}

// countAnswers counts the answers equal to want and those with nothing
// (status 0); any other answer fails t.
func countAnswers(t *testing.T, what string, got []answer, want answer) (matched, silent int) {
	t.Helper()
	for _, a := range got {
		switch a {
		case want:
			matched++
		case answer{}:
			silent++
		default:
			t.Errorf("%s: answer %d, Retry-After %q, %q; want %d, Retry-After %q, %q (or nothing yet)", what, a.status, a.retry, a.body, want.status, want.retry, want.body)
		}
	}
	return matched, silent
}

// checkPeakRSS asserts that the process pid's peak RSS is at most bound
// KiB (logged only in a race build).
func checkPeakRSS(t *testing.T, pid int, bound int64, flood string) {
	t.Helper()
	rss := peakRSSKiB(t, pid)
	t.Logf("peak RSS %d KiB (bound %d KiB) after %s", rss, bound, flood)
	if rss > bound && !raceBuild {
		t.Errorf("peak RSS %d KiB, over the bound of %d KiB stated in LIMITATIONS.md", rss, bound)
	}
}

// copyFile copies src to a new executable file dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
