package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/logservice"
)

// TestWriterServiceWitnessed: with --policy the service gathers two
// witnesses' cosignatures (`writ witness serve`) after its commits, and
// serves only a checkpoint both cosigned: a replica under the same
// policy syncs every record submitted, and /metrics shows the witnessed
// size. Without --write, --policy is refused.
func TestWriterServiceWitnessed(t *testing.T) {
	w := newCrashWorld(t, "example.com/writer-witnessed")
	vkey := w.vkey.String()
	policy := "log " + vkey + "\n"
	for _, name := range []string{"w1", "w2"} {
		writIn(t, w.dir, "witness", "key", "generate", "--name", "witness.example/"+name, "--out", name, "--work-factor", "10")
		wk, err := os.ReadFile(filepath.Join(w.dir, name+".vkey"))
		if err != nil {
			t.Fatal(err)
		}
		startServer(t, w.dir, "witness", "serve", "--key", name+".key", "--dir", "WD"+name, "--listen", "127.0.0.1:0", "--addr-file", "a"+name, "--log", vkey)
		policy += fmt.Sprintf("witness %s %s http://%s\n", name, strings.TrimSpace(string(wk)), waitAddr(t, filepath.Join(w.dir, "a"+name)))
	}
	policy += "group both all w1 w2\nquorum both\n"
	w.write("writer.policy", []byte(policy))
	cmd := exec.Command("writ", "ledger", "serve", "--dir", "W", "--listen", "127.0.0.1:0", "--policy", "writer.policy")
	cmd.Dir = w.dir
	if out, err := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "--write") {
		t.Fatalf("--policy without --write: %v\n%s", err, out)
	}
	startServer(t, w.dir, "ledger", "serve", "--write", "--dir", "W", "--listen", "127.0.0.1:0", "--addr-file", "addr", "--policy", "writer.policy", "--max-per-client", "32")
	url := "http://" + waitAddr(t, filepath.Join(w.dir, "addr"))
	waitReady(t, &http.Client{}, url)
	total := 2
	for range 3 {
		names, recs := w.batch(2)
		total += len(recs)
		writIn(t, w.dir, append([]string{"ledger", "append", "--to", url, "--vkey", vkey}, names...)...)
	}
	// Steady submissions from 16 clients: the head moves while the
	// witnesses answer, and what they cosigned is served all the same.
	subs := make([][]*submission, 16)
	n := 0
	for i := range subs {
		for range 40 {
			n++
			in := testkit.Instruction(fmt.Sprintf("%032x", 1<<40+n))
			in.IssuedAt, in.NotBefore, in.Expires = time.Now().Unix(), time.Now().Unix(), time.Now().Add(time.Hour).Unix()
			subs[i] = append(subs[i], &submission{recs: [][]byte{testkit.Seal(t, in, w.op)}})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(subs))
	for i := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &logservice.Client{URL: url, VKey: w.vkey}
			for _, s := range subs[i] {
				if got, err := send(context.Background(), c, s); err != nil || got != 0 {
					errs <- fmt.Errorf("%d, %v", got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total += n
	// Whatever it serves now carries both witnesses' cosignatures, even
	// if the last commits are not witnessed yet.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(url + "/checkpoint")
		if err != nil {
			t.Fatal(err)
		}
		cp, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(cp), "— witness.example/w1 ") && strings.Contains(string(cp), "— witness.example/w2 ") {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the served checkpoint lacks a witness's cosignature:\n%s", cp)
		}
	}
	var out []byte
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		sync := exec.Command("writ", "--json", "ledger", "sync", "--dir", "R", "--from", url, "--vkey", vkey, "--policy", "writer.policy")
		sync.Dir = w.dir
		var err error
		if out, err = sync.CombinedOutput(); err == nil && strings.Contains(string(out), fmt.Sprintf(`"after":%d`, total)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no witnessed checkpoint of %d entries within 20 s; the last sync: %v\n%s", total, err, out)
		}
	}
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), fmt.Sprintf("writ_log_witnessed_tree_size{origin=\"example.com/writer-witnessed\"} %d", total)) {
		t.Fatalf("/metrics does not show the witnessed size %d:\n%s", total, grepLines(string(body), "witness"))
	}
	t.Logf("%s", grepLines(string(body), "writ_log_witness_collections_total{"))
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
