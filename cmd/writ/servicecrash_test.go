package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/logservice"
	"github.com/writ-ledger/writ/schemas"
)

// submission is one submitter's records, sent until answered.
type submission struct {
	recs  [][]byte
	acked bool // answered appended (the answer verified)
	dup   bool // answered duplicate-record on a retry: appended before an answer was lost
}

// TestWriterServiceCrash SIGKILLs `writ ledger serve --write` at random
// moments while 64 submitters send it records (one or two instructions a
// submission; a submission not answered is sent again after the
// restart), over several rounds. Every acknowledged record is in the log
// exactly once, every other at most once (a retry of one appended before
// its answer was lost is refused as a duplicate, and it is there once),
// and a full replay of the log accepts every entry and answers as the
// state the service persisted (crashWorld.checkStore).
func TestWriterServiceCrash(t *testing.T) {
	w := newCrashWorld(t, "example.com/writer-crash")
	const submitters = 64
	subs := w.instructions(submitters, 400)
	next := make([]int, submitters) // each submitter's first submission not answered
	bad := make(chan error, 1)
	var killed int
	for round := range stateCrashRounds() {
		srv, url := startWriter(t, w.dir)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for i := range submitters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				submitUntil(ctx, &logservice.Client{URL: url, VKey: w.vkey, HTTP: &http.Client{Timeout: 10 * time.Second}}, subs[i], &next[i], bad)
			}()
		}
		time.Sleep(150*time.Millisecond + time.Duration(w.rng.Int64N(int64(700*time.Millisecond))))
		srv.Process.Signal(syscall.SIGKILL)
		srv.Wait()
		killed++
		cancel()
		wg.Wait()
		select {
		case err := <-bad:
			t.Fatalf("round %d: %v", round, err)
		default:
		}
		t.Logf("round %d: killed; %d submissions answered so far", round, sum(next))
	}
	// The last round's unanswered submissions, sent again to a restarted
	// service: each is appended now, or refused as a duplicate (appended
	// before the kill).
	srv, url := startWriter(t, w.dir)
	c := &logservice.Client{URL: url, VKey: w.vkey}
	for i := range subs {
		if next[i] < len(subs[i]) {
			if got, err := send(context.Background(), c, subs[i][next[i]]); err != nil || got < 0 {
				t.Fatalf("sent again after the last kill: %d, %v", got, err)
			}
		}
	}
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("the service after SIGTERM: %v", err)
	}
	stored := storedEntries(t, filepath.Join(w.dir, "W", "authority"))
	count := map[string]int{}
	for _, e := range stored {
		count[schemas.SHA256Digest(e)]++
	}
	acked, dups, inLog := 0, 0, 0
	for _, ss := range subs {
		for _, s := range ss {
			for _, r := range s.recs {
				c := count[schemas.SHA256Digest(r)]
				switch {
				case c > 1:
					t.Fatalf("a record is in the log %d times", c)
				case (s.acked || s.dup) && c != 1:
					t.Fatalf("an acknowledged record is not in the log (acked %v, duplicate %v)", s.acked, s.dup)
				}
				if s.acked {
					acked++
				} else if s.dup {
					dups++
				}
				inLog += c
			}
		}
	}
	// Every submission not answered was sent again until it was: every
	// record in the log is one answered appended or duplicate.
	if acked == 0 || len(stored) != 2+inLog || inLog != acked+dups {
		t.Fatalf("%d records acknowledged, %d answered duplicate; the log holds %d entries, %d of them submitted", acked, dups, len(stored), inLog)
	}
	w.checkStore(filepath.Join(w.dir, "W", "authority"), w.vkey, nil)
	fmt.Printf("writer service crash: %d rounds killed, %d records acknowledged, %d more whose answer a kill lost (refused as duplicates when sent again), %d entries; acknowledged records lost: 0, duplicated: 0\n",
		killed, acked, dups, len(stored))
}

// instructions makes each submitter's submissions: each one or two
// instructions by the operator, valid for an hour.
func (w *crashWorld) instructions(submitters, each int) [][]*submission {
	subs := make([][]*submission, submitters)
	n := 0
	for i := range subs {
		for range each {
			s := &submission{}
			for range 1 + n%2 {
				n++
				in := testkit.Instruction(fmt.Sprintf("%032x", n))
				in.IssuedAt, in.NotBefore, in.Expires = time.Now().Unix(), time.Now().Unix(), time.Now().Add(time.Hour).Unix()
				s.recs = append(s.recs, testkit.Seal(w.t, in, w.op))
			}
			subs[i] = append(subs[i], s)
		}
	}
	return subs
}

// startWriter starts `writ ledger serve --write` on w's ledger W and
// waits until it is ready.
func startWriter(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	return startWriterOn(t, dir, "W", nil)
}

// startWriterOn starts `writ ledger serve --write` in dir on the ledger
// ldir, with more arguments and environment, and waits until it is
// ready.
func startWriterOn(t *testing.T, dir, ldir string, more []string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	addrFile := filepath.Join(dir, ldir+".addr")
	os.Remove(addrFile)
	cmd := exec.Command("writ", append([]string{"ledger", "serve", "--write", "--dir", ldir, "--listen", "127.0.0.1:0", "--addr-file", addrFile,
		"--max-per-client", "64", "--max-in-flight", "128"}, more...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase, "GORACE=atexit_sleep_ms=0"), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	url := "http://" + waitAddr(t, addrFile)
	waitReady(t, &http.Client{}, url)
	return cmd, url
}

// submitUntil sends subs from *next on, each until it is answered,
// until ctx is done; an answer neither appended, duplicate nor busy is
// put in bad.
func submitUntil(ctx context.Context, c *logservice.Client, subs []*submission, next *int, bad chan<- error) {
	for *next < len(subs) && ctx.Err() == nil {
		switch got, err := send(ctx, c, subs[*next]); {
		case err != nil:
			select {
			case bad <- err:
			default:
			}
			return
		case got < 0:
			time.Sleep(20 * time.Millisecond) // no answer: the service is down or restarting
		default:
			*next++
		}
	}
}

// send submits s once: 0 when answered appended, 1 when answered
// duplicate on its first record (appended before an answer was lost),
// -1 with no answer (or busy); any other answer is an error.
func send(ctx context.Context, c *logservice.Client, s *submission) (int, error) {
	_, err := c.Append(ctx, s.recs)
	var r *logservice.Refusal
	switch {
	case err == nil:
		s.acked = true
		return 0, nil
	case errors.As(err, &r) && r.Rule == "duplicate-record" && strings.HasPrefix(r.Err, "record 1 of"):
		s.dup = true
		return 1, nil
	case errors.As(err, &r) && r.Status != http.StatusServiceUnavailable && r.Status != http.StatusTooManyRequests:
		return 0, fmt.Errorf("a submission of %d records refused: %w", len(s.recs), err)
	case errors.Is(err, logservice.ErrAnswer):
		return 0, err
	}
	return -1, nil
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
