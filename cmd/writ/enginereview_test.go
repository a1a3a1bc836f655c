package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/writ-ledger/writ/engine"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/logservice"
)

// The engine's writers against what a hostile review found: a log taken
// back while a writer on another copy goes on (a fork), a batch the
// database took whose answer was lost (refused, yet in the log), a
// tampered batch in the database (published to Tessera, poisoning the
// bucket for good).

// sqlDB opens the engine's database, from the test.
func (w *engineWorld) sqlDB() *sql.DB {
	db, err := sql.Open("mysql", strings.TrimPrefix(w.env[0], "WRIT_ENGINE_DSN="))
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { db.Close() })
	return db
}

// holdPublishLock takes the publishers' lock from the test; release
// gives it back.
func (w *engineWorld) holdPublishLock() (release func()) {
	conn, err := w.sqlDB().Conn(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	name := engine.Config{Endpoint: w.store.Endpoint, Bucket: "log"}.PublishLockName()
	var got int
	if err := conn.QueryRowContext(context.Background(), "SELECT GET_LOCK(?, 30)", name).Scan(&got); err != nil || got != 1 {
		w.t.Fatalf("the publish lock: %v %d", err, got)
	}
	return func() {
		conn.ExecContext(context.Background(), "SELECT RELEASE_LOCK(?)", name)
		conn.Close()
	}
}

// TestBackClosesEngine: once the log is taken back into one copy, a
// writer on another copy (started later, or never stopped) is refused
// every batch (503, the engine closed), and that copy appends alone
// nowhere (exit 2): no second log under the same key.
func TestBackClosesEngine(t *testing.T) {
	w := newEngineWorld(t, "example.com/back-closes")
	a, ca := w.writer("W")
	defer stopWriter(t, a)
	_, recs := w.batch(0)
	got, err := ca.Append(context.Background(), recs)
	if err != nil {
		t.Fatal(err)
	}
	w.waitPublished(got.Checkpoint.Size)
	cmd := exec.Command("writ", append([]string{"ledger", "migrate", "--back", "--dir", "W2"}, w.args...)...)
	cmd.Dir, cmd.Env = w.dir, append(cmd.Environ(), w.env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("migrate --back with a writer running: %v\n%s", err, out)
	}
	names, _ := w.batch(0)
	writIn(t, w.dir, append([]string{"ledger", "append", "--dir", "W2"}, names...)...)
	_, recs = w.batch(0)
	var r *logservice.Refusal
	if _, err := ca.Append(context.Background(), recs); !errors.As(err, &r) || r.Status != http.StatusServiceUnavailable || !strings.Contains(r.Err, "the engine is closed") {
		t.Fatalf("a writer's batch after the log was taken back: %v", err)
	}
	stopWriter(t, a)
	cmd = exec.Command("writ", append([]string{"ledger", "append", "--dir", "W"}, names...)...)
	cmd.Dir, cmd.Env = w.dir, append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase)
	if out, _ := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "the log is on a distributed engine") {
		t.Fatalf("a local append to the other copy: exit %d\n%s\nwant 2", cmd.ProcessState.ExitCode(), out)
	}
	for _, c := range []struct {
		args []string
		exit int
	}{
		{[]string{"ledger", "serve", "--write", "--dir", "W", "--listen", "127.0.0.1:0"}, 2},
		{[]string{"ledger", "checkpoint", "--refresh", "--dir", "W"}, 1},
	} {
		cmd = exec.Command("writ", c.args...)
		cmd.Dir, cmd.Env = w.dir, append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase)
		if out, _ := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != c.exit || !strings.Contains(string(out), "on a distributed engine") {
			t.Errorf("%v on the other copy: exit %d\n%s\nwant %d", c.args, cmd.ProcessState.ExitCode(), out, c.exit)
		}
	}
}

// TestTamperedBatchNeverPublished: a batch's entries changed in the
// database before any publisher carried it: publishers read the entries
// from their writer's verified log, so the bucket gets the true ones; a
// second writer catching up with the tampered batch refuses it (503,
// another log) and takes it once it is put back.
func TestTamperedBatchNeverPublished(t *testing.T) {
	w := newEngineWorld(t, "example.com/tampered-batch")
	a, ca := w.writer("W")
	defer stopWriter(t, a)
	release := w.holdPublishLock()
	_, recs := w.batch(2)
	got, err := ca.Append(context.Background(), recs)
	if err != nil {
		t.Fatal(err)
	}
	db := w.sqlDB()
	first := got.Entries[0].Index
	var orig []byte
	if err := db.QueryRow("SELECT entries FROM writ_batch WHERE first = ?", first).Scan(&orig); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(orig)
	bad[len(bad)-1] ^= 1 // the last entry's signature
	if _, err := db.Exec("UPDATE writ_batch SET entries = ? WHERE first = ?", bad, first); err != nil {
		t.Fatal(err)
	}
	release()
	w.waitPublished(got.Checkpoint.Size)
	b, cb := w.writer("W2")
	defer stopWriter(t, b)
	_, more := w.batch(0)
	var r *logservice.Refusal
	if _, err := cb.Append(context.Background(), more); !errors.As(err, &r) || r.Status != http.StatusServiceUnavailable || !strings.Contains(r.Err, "the engine holds another log") {
		t.Fatalf("a writer catching up with a tampered batch: %v", err)
	}
	if _, err := db.Exec("UPDATE writ_batch SET entries = ? WHERE first = ?", orig, first); err != nil {
		t.Fatal(err)
	}
	if got, err = cb.Append(context.Background(), more); err != nil {
		t.Fatalf("once the batch is put back: %v", err)
	}
	w.waitPublished(got.Checkpoint.Size)
	w.replica(testkit.Nginx(t, filepath.Join(w.store.Root, "log")))
}

// TestInsertAnswerLost: a batch's insert reaches the database and
// commits, but its answer is lost (a proxy cuts the connection): the
// writer finds its batch sequenced and acknowledges it, once.
func TestInsertAnswerLost(t *testing.T) {
	w := newEngineWorld(t, "example.com/answer-lost")
	p := newDropProxy(t, fmt.Sprintf("127.0.0.1:%d", w.db.Port), "INSERT INTO writ_batch")
	env := append(append([]string{}, w.env...), "WRIT_ENGINE_DSN="+fmt.Sprintf("root@tcp(%s)/writ", p.ln.Addr()))
	cmd, url := startWriterOn(t, w.dir, "W", w.args, env...)
	defer stopWriter(t, cmd)
	c := &logservice.Client{URL: url, VKey: w.vkey, HTTP: &http.Client{Timeout: 30 * time.Second}}
	_, recs := w.batch(0)
	p.armed.Store(true)
	got, err := c.Append(context.Background(), recs)
	if p.fired.Load() != 1 || err != nil {
		t.Fatalf("the insert's answer cut %d times; the submission: %v", p.fired.Load(), err)
	}
	w.waitPublished(got.Checkpoint.Size)
	entries := w.replica(testkit.Nginx(t, filepath.Join(w.store.Root, "log")))
	in := 0
	for _, e := range entries {
		for _, r := range recs {
			if bytes.Equal(e, r) {
				in++
			}
		}
	}
	if in != len(recs) {
		t.Fatalf("%d of the %d records acknowledged are in the log", in, len(recs))
	}
}

// dropProxy forwards TCP to a MySQL server; armed, it lets the first
// prepared statement holding marker execute and cuts the connection
// before its answer reaches the client.
type dropProxy struct {
	ln     net.Listener
	armed  atomic.Bool
	fired  atomic.Int32
	marker []byte
}

func newDropProxy(t *testing.T, target, marker string) *dropProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{ln: ln, marker: []byte(marker)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			var cut atomic.Bool
			go p.answers(c, s, &cut)
			go p.requests(c, s, &cut)
		}
	}()
	return p
}

// answers forwards the server's answers until cut.
func (p *dropProxy) answers(c, s net.Conn, cut *atomic.Bool) {
	buf := make([]byte, 1<<16)
	for {
		n, err := s.Read(buf)
		if n > 0 && !cut.Load() {
			c.Write(buf[:n])
		}
		if err != nil {
			c.Close()
			return
		}
	}
}

// requests forwards the client's requests; armed, once the marked
// statement is prepared, its execution (COM_STMT_EXECUTE) goes through
// and the connection is cut.
func (p *dropProxy) requests(c, s net.Conn, cut *atomic.Bool) {
	buf := make([]byte, 1<<20)
	prepared := false
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if p.armed.Load() && bytes.Contains(buf[:n], p.marker) {
				prepared = true
			} else if prepared && n > 4 && buf[4] == 0x17 {
				p.armed.Store(false)
				cut.Store(true)
				s.Write(buf[:n])
				p.fired.Add(1)
				time.Sleep(300 * time.Millisecond) // the server commits
				c.Close()
				s.Close()
				return
			}
			s.Write(buf[:n])
		}
		if err != nil {
			s.Close()
			return
		}
	}
}
