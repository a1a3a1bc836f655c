// Command tileserve serves a directory of published logs (`writ ledger
// publish --to DIR/NAME`) over HTTP on loopback, for bench/scale.sh, and
// counts what it serves: one line per request appended to -log, "STATUS
// BYTES PATH", BYTES being the response body bytes written (no gzip: the
// wire's body bytes). The line is written before the response's last
// bytes are flushed, so a client that has read its answers has been
// logged. It writes the URL it listens on to -addr-file and serves until
// killed.
//
//	go run ./bench/tileserve -dir /tmp/www -log /tmp/access.log -addr-file /tmp/url
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
)

type counter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (c *counter) WriteHeader(s int) {
	if c.status == 0 {
		c.status = s
	}
	c.ResponseWriter.WriteHeader(s)
}

func (c *counter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(p)
	c.bytes += int64(n)
	return n, err
}

func main() {
	dir := flag.String("dir", "", "directory to serve")
	logPath := flag.String("log", "", "access log to append to")
	addrFile := flag.String("addr-file", "", "write http://HOST:PORT here once listening")
	flag.Parse()
	if *dir == "" || *logPath == "" || *addrFile == "" {
		fail(fmt.Errorf("-dir, -log and -addr-file are required"))
	}
	logf, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	files := http.FileServer(http.Dir(*dir))
	var mu sync.Mutex
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &counter{ResponseWriter: w}
		files.ServeHTTP(c, r)
		if c.status == 0 {
			c.status = http.StatusOK
		}
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprintf(logf, "%d %d %s\n", c.status, c.bytes, r.URL.Path); err != nil {
			fail(err)
		}
	})
	url := "http://" + ln.Addr().String()
	if err := os.WriteFile(*addrFile+".tmp", []byte(url+"\n"), 0o644); err != nil {
		fail(err)
	}
	if err := os.Rename(*addrFile+".tmp", *addrFile); err != nil {
		fail(err)
	}
	fail(http.Serve(ln, h))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tileserve:", err)
	os.Exit(1)
}
