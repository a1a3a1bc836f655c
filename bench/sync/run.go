package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/writ-ledger/writ/ledger/tiles"
)

// cleanups run, last first, when the benchmark ends or fails.
var cleanups []func()

func cleanup() {
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanups = nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench/sync: "+format+"\n", args...)
	cleanup()
	os.Exit(1)
}

// run runs name with args in dir and returns its stdout and wall time;
// a non-zero exit fails the benchmark, quoting stderr.
func run(dir, name string, args ...string) ([]byte, time.Duration) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		fail("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), err, out.Bytes(), errb.Bytes())
	}
	return out.Bytes(), d
}

// writ runs the writ binary with --json and decodes its one JSON result
// into v.
func (b *bench) writ(v any, args ...string) time.Duration {
	out, d := run(b.work, b.bin, append([]string{"--json"}, args...)...)
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		fail("writ %s: reading its JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
	if dec.More() {
		fail("writ %s: more than one JSON result:\n%s", strings.Join(args, " "), out)
	}
	return d
}

// The JSON results the benchmark reads (all their fields: an unknown one
// fails the decode, so a changed output is noticed).
type (
	vkeyOut struct {
		VKey   string `json:"vkey"`
		Origin string `json:"origin"`
	}
	checkpointOut struct {
		Log        string `json:"log"`
		Origin     string `json:"origin"`
		Size       int64  `json:"size"`
		RootHash   string `json:"root_hash"`
		Checkpoint string `json:"checkpoint"`
	}
	verifyOut struct {
		OK   bool `json:"ok"`
		Logs []struct {
			Log      string `json:"log"`
			Origin   string `json:"origin"`
			Size     int64  `json:"size"`
			RootHash string `json:"root_hash"`
		} `json:"logs"`
	}
	publishOut struct {
		Log    string `json:"log"`
		Origin string `json:"origin"`
		Before int64  `json:"before"`
		After  int64  `json:"after"`
		Files  int    `json:"files"`
		Bytes  int64  `json:"bytes"`
	}
	syncOut struct {
		Origin    string `json:"origin"`
		Before    int64  `json:"before"`
		After     int64  `json:"after"`
		RootHash  string `json:"root_hash"`
		Requests  int    `json:"requests"`
		Bytes     int64  `json:"bytes"`
		Refreshed bool   `json:"refreshed"`
	}
	appendOut struct {
		Index  int64  `json:"index"`
		Digest string `json:"digest"`
		Kind   string `json:"kind"`
	}
)

// head returns the ledger's authority checkpoint: size and root.
func (b *bench) head(dir string) checkpointOut {
	var cp checkpointOut
	b.writ(&cp, "ledger", "checkpoint", "--dir", dir)
	if cp.Log != "authority" || cp.Size <= 0 || len(cp.RootHash) != 64 {
		fail("writ ledger checkpoint --dir %s: unexpected %+v", dir, cp)
	}
	return cp
}

// verify runs `writ ledger verify` on dir and returns the authority
// log's size and root, and the wall time.
func (b *bench) verify(dir string) (int64, string, time.Duration) {
	var v verifyOut
	d := b.writ(&v, "ledger", "verify", "--dir", dir)
	if !v.OK || len(v.Logs) != 1 || v.Logs[0].Log != "authority" {
		fail("writ ledger verify --dir %s: %+v", dir, v)
	}
	return v.Logs[0].Size, v.Logs[0].RootHash, d
}

// sameRoot fails unless the replica holds exactly the writer's tree.
func (b *bench) sameRoot(what string, s syncOut) {
	w, r := b.head(b.big), b.head(b.rep)
	if s.After != w.Size || s.RootHash != w.RootHash || r.Size != w.Size || r.RootHash != w.RootHash || r.Origin != w.Origin {
		fail("%s: the replica is not the writer's log: writer size %d root %s; sync reported size %d root %s; replica holds size %d root %s",
			what, w.Size, w.RootHash, s.After, s.RootHash, r.Size, r.RootHash)
	}
}

// entryBytes sums the sizes of the first size entries of the log
// published at dir, read from its entry bundles.
func entryBytes(dir string, size int64) int64 {
	var total, seen int64
	for n := int64(0); n*tiles.Width < size; n++ {
		w := int(min(tiles.Width, size-n*tiles.Width))
		t := tiles.Tile{Kind: tiles.KindEntries, Level: -1, N: n, W: w}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(t.Path())))
		if err != nil {
			fail("reading the published entries: %v", err)
		}
		es, err := tiles.ParseBundle(data, w)
		if err != nil {
			fail("%s: %v", t.Path(), err)
		}
		for _, e := range es {
			total += int64(len(e))
		}
		seen += int64(len(es))
	}
	if seen != size {
		fail("the published bundles hold %d entries, not %d", seen, size)
	}
	return total
}

// jsonUnmarshal decodes one JSON object into v, refusing unknown fields.
func jsonUnmarshal(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// accessLog reads what nginx served, from its access log (the default
// "combined" format): requests and body bytes sent since the last call,
// that is the bytes on the wire after gzip.
type accessLog struct {
	path string
	off  int64
}

// served returns the requests, those not answered 200, and the body
// bytes nginx sent since the last call, waiting up to 2s for want
// requests (nginx logs a request after its response has gone).
func (a *accessLog) served(want int) (requests, not200 int, wire int64) {
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r, n, w := a.read()
		requests, not200, wire = requests+r, not200+n, wire+w
		if requests >= want || time.Now().After(deadline) {
			return requests, not200, wire
		}
	}
}

func (a *accessLog) read() (requests, not200 int, wire int64) {
	f, err := os.Open(a.path)
	if err != nil {
		fail("nginx access log: %v", err)
	}
	defer f.Close()
	if _, err := f.Seek(a.off, io.SeekStart); err != nil {
		fail("nginx access log: %v", err)
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			break // a partial last line is read next time
		} else if err != nil {
			fail("nginx access log: %v", err)
		}
		a.off += int64(len(line))
		// ... "GET /authority/checkpoint HTTP/1.1" 200 123 "-" "Go-http-client/1.1"
		parts := strings.Split(line, `"`)
		var f []string
		if len(parts) > 2 {
			f = strings.Fields(parts[2])
		}
		if len(f) < 2 {
			fail("nginx access log: unexpected line %q", line)
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			fail("nginx access log: unexpected line %q", line)
		}
		requests++
		wire += n
		if f[0] != "200" {
			not200++
		}
	}
	return requests, not200, wire
}
