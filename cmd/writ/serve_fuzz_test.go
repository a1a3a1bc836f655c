package main

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// FuzzReadRequest: any bytes a client sends get a request or an error
// naming what is wrong, never a panic, and never a request without a
// dispatch and an agent binary.
func FuzzReadRequest(f *testing.F) {
	for _, seed := range []string{
		`{"dispatch":"AAE=","agent_binary":"/bin/true"}`,
		`{"dispatch":"AAE=","agent_binary":"/a","engine_binary":"/e","provision_dir":"/p","receipt":"AA=="}`,
		`{"dispatch":"","agent_binary":"/a"}`,
		`{"dispatch":"AAE=","agent_binary":"/a","extra":1}`,
		`{"dispatch":"!!!","agent_binary":"/a"}`,
		`[]`, `null`, `{`, ``, strings.Repeat(`[`, 10000),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		client, server := net.Pipe()
		go func() {
			client.Write(body)
			client.Close()
		}()
		server.SetDeadline(time.Now().Add(5 * time.Second))
		req, err := readRequest(server)
		server.Close()
		if err == nil && (len(req.Dispatch) == 0 || req.AgentBinary == "") {
			t.Fatalf("accepted a request without a dispatch or an agent binary: %+v", req)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "request") {
			t.Fatalf("error does not name the request: %v", err)
		}
	})
}

// TestPeerUID: the client learns the server's user id from the kernel
// (SO_PEERCRED), which is how it refuses a verdict from another user.
func TestPeerUID(t *testing.T) {
	path := t.TempDir() + "/s.sock"
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	uid, err := peerUID(conn.(*net.UnixConn))
	if err != nil || uid != os.Getuid() {
		t.Fatalf("peerUID = %d, %v; want %d", uid, err, os.Getuid())
	}
}
