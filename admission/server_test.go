package admission_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

// TestListen: the socket is 0600; a live server's socket and any other
// file are refused; a stale socket is replaced.
func TestListen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sock")
	ln, err := admission.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, %v; want 0600", fi.Mode(), err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if _, err := admission.Listen(path); !errors.Is(err, admission.ErrSocketInUse) {
		t.Errorf("Listen on a live socket: %v, want ErrSocketInUse", err)
	}
	ln.Close() // the path stays: a stale socket
	ln2, err := admission.Listen(path)
	if err != nil {
		t.Fatalf("Listen on a stale socket: %v", err)
	}
	ln2.Close()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := admission.Listen(file); !errors.Is(err, admission.ErrNotSocket) {
		t.Errorf("Listen on a file: %v, want ErrNotSocket", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Errorf("the file was replaced")
	}
}

// TestServeRejectsOnTheWire: a request with a field the protocol does not
// have is answered, byte for byte, with the error and run false.
func TestServeRejectsOnTheWire(t *testing.T) {
	_, _, socket := started(t, verify.ModeOff, nil)
	conn, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, `{"dispatch":"AAE=","agent_binary":"/a","extra":1}`)
	got, err := io.ReadAll(conn)
	want := fmt.Sprintf(`{"error":"request: json: unknown field \"extra\" (one JSON object of at most %d bytes)","run":false}`+"\n", admission.MaxRequestSize)
	if err != nil || string(got) != want {
		t.Fatalf("answer %q, %v; want %q", got, err, want)
	}
}

// TestServeNotRecorded: when the runner can no longer record decisions,
// the client gets the verdict with the error, no decision index and run
// false, and the server stops with runner.ErrNotRecorded.
func TestServeNotRecorded(t *testing.T) {
	r, err := newRunner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	vr, err := r.open(verify.ModeOff)
	if err != nil {
		t.Fatal(err)
	}
	socket, stop, err := serve(t.TempDir(), vr)
	if err != nil {
		t.Fatal(err)
	}
	vr.Close()
	res, err := admission.NewClient(socket).Request(context.Background(), admission.Request{Dispatch: instruction(1), AgentBinary: agentPath})
	if err != nil || res.Run || res.DecisionIndex != nil || res.Error == "" {
		t.Fatalf("Request = %+v, %v; want a verdict with an error, not run", res, err)
	}
	if err := stop(); !errors.Is(err, runner.ErrNotRecorded) {
		t.Fatalf("Serve = %v, want ErrNotRecorded", err)
	}
}

// TestServeStops: Serve returns nil when its context ends, and closes the
// listener.
func TestServeStops(t *testing.T) {
	_, _, socket := started(t, verify.ModeOff, nil) // the cleanup checks Serve's nil
	res, err := admission.NewClient(socket).Request(context.Background(), admission.Request{Dispatch: instruction(1), AgentBinary: agentPath})
	if err != nil || !res.Run || res.Verdict.Verdict != verify.Admitted {
		t.Fatalf("Request = %+v, %v", res, err)
	}
}

// TestClientStrict: answers that are not one well-formed response are
// ErrMalformedResponse, with no response. A raw server writes them.
func TestClientStrict(t *testing.T) {
	sent := instruction(1)
	verdict := `"instruction_digest":"` + schemas.SHA256Digest(sent) + `","verdict":"refused","rule":"replay"`
	for _, tc := range []struct{ answer, want string }{
		{`not json`, "the server's answer is not JSON: invalid character 'o' in literal null (expecting 'u')"},
		{``, "the server's answer is not JSON: EOF"},
		{`{` + verdict + `,"extra":1}`, `the server's answer is not a verdict: json: unknown field "extra"`},
		{`{` + verdict + `} {}`, "the server's answer is not JSON: data after the object"},
		{`{` + verdict + `,"run":true}`, `the server's answer says run beside verdict "refused" and error ""`},
		{`{"run":true}`, `the server's answer says run beside verdict "" and error ""`},
		{strings.Repeat(" ", admission.MaxResponseSize) + `{` + verdict + `}`, fmt.Sprintf("the server's answer is over %d bytes", admission.MaxResponseSize)},
	} {
		socket := rawServer(t, tc.answer)
		res, err := admission.NewClient(socket).Request(context.Background(), admission.Request{Dispatch: sent, AgentBinary: "/a"})
		if res != nil || !errors.Is(err, admission.ErrMalformedResponse) || err.Error() != tc.want {
			t.Errorf("answer %.40q: %+v, %v; want nil, %s", tc.answer, res, err, tc.want)
		}
	}
}

// rawServer answers one request on a new socket with answer.
func rawServer(t *testing.T, answer string) string {
	path := filepath.Join(t.TempDir(), "raw.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		bufio.NewReader(c).ReadString('\n') // the request: one JSON line
		io.WriteString(c, answer)
	}()
	return path
}
