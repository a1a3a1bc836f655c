package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/logservice"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
)

// engineWorld is a crashWorld whose log was migrated to a real engine
// (MariaDB and versitygw), with a second copy of it (W2) for a second
// writer.
type engineWorld struct {
	*crashWorld
	db    *testkit.MariaDB
	store *testkit.S3
	args  []string // the engine's flags
	env   []string // its DSN and credentials
}

func newEngineWorld(t *testing.T, origin string) *engineWorld {
	db, store := testkit.MariaDBForTest(t), testkit.S3ForTest(t)
	w := &engineWorld{crashWorld: newCrashWorld(t, origin), db: db, store: store}
	dsn, err := db.CreateDatabase("writ")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateBucket(context.Background(), "log"); err != nil {
		t.Fatal(err)
	}
	w.args = []string{"--bucket", "log", "--s3-endpoint", store.Endpoint}
	w.env = []string{"WRIT_ENGINE_DSN=" + dsn, "AWS_ACCESS_KEY_ID=" + store.AccessKey, "AWS_SECRET_ACCESS_KEY=" + store.SecretKey}
	cmd := exec.Command("writ", append([]string{"ledger", "migrate", "--dir", "W"}, w.args...)...)
	cmd.Dir, cmd.Env = w.dir, append(cmd.Environ(), w.env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(w.dir, "W"), filepath.Join(w.dir, "W2")).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return w
}

// writer starts a writer service on ledger ldir and the engine.
func (w *engineWorld) writer(ldir string) (*exec.Cmd, *logservice.Client) {
	cmd, url := startWriterOn(w.t, w.dir, ldir, w.args, w.env...)
	w.t.Cleanup(func() { // one a failing test left running
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &logservice.Client{URL: url, VKey: w.vkey, HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// waitPublished waits until the bucket's checkpoint has size entries
// (a writer's publisher carries its batches there within seconds).
func (w *engineWorld) waitPublished(size int64) {
	deadline := time.Now().Add(time.Minute)
	for {
		data, _ := os.ReadFile(filepath.Join(w.store.Root, "log", "checkpoint"))
		if lines := strings.Split(string(data), "\n"); len(lines) > 1 && lines[1] == strconv.FormatInt(size, 10) {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the bucket's checkpoint after a minute:\n%s\nwant size %d", data, size)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// replica syncs the replica R from the bucket through nginx and returns
// its entries, after a full replay accepted every one of them.
func (w *engineWorld) replica(nginx string) [][]byte {
	writIn(w.t, w.dir, "ledger", "sync", "--dir", "R", "--from", nginx, "--vkey", w.vkey.String())
	store := filepath.Join(w.dir, "R", "authority")
	w.checkStore(store, w.vkey, nil)
	return storedEntries(w.t, store)
}

// TestTwoWritersRaceRevocation: two writer services on one engine, each
// on its own copy of the log. Rounds race a revocation of a key, sent
// to one writer, against an instruction signed by that key, sent to the
// other at the same moment: whichever the engine's lock lets judge
// first, the log never holds the instruction after the revocation (a
// replica synced from the bucket through nginx replays every entry),
// the instruction is acknowledged exactly when it precedes the
// revocation, and else refused 403 with the rule revoked; every
// acknowledged record is in the log once.
func TestTwoWritersRaceRevocation(t *testing.T) {
	w := newEngineWorld(t, "example.com/two-writers")
	nginx := testkit.Nginx(t, filepath.Join(w.store.Root, "log"))
	a, ca := w.writer("W")
	defer stopWriter(t, a)
	b, cb := w.writer("W2")
	defer stopWriter(t, b)
	ctx := context.Background()
	const rounds = 30
	type race struct {
		use, rev []byte
		used     bool
	}
	var races []race
	now := time.Now()
	for r := range rounds {
		k := testkit.Key(t, byte(100+r))
		d := testkit.Delegation(k, []string{"instruct"}, "demo", "runner-*")
		d.IssuedAt, d.NotBefore, d.NotAfter = now.Unix(), now.Add(-time.Hour).Unix(), now.Add(24*time.Hour).Unix()
		// The delegation through one writer, the race through both, the
		// sides swapped each round.
		first, second := ca, cb
		if r%2 == 1 {
			first, second = cb, ca
		}
		if _, err := first.Append(ctx, [][]byte{testkit.Seal(t, d, w.rootKey)}); err != nil {
			t.Fatalf("round %d: the delegation: %v", r, err)
		}
		in := testkit.Instruction(fmt.Sprintf("%032x", 0xace00+r))
		in.IssuedAt, in.NotBefore, in.Expires = now.Unix(), now.Unix(), now.Add(time.Hour).Unix()
		rev := &schemas.Revocation{V: 1, Target: k.Public().ID(), Reason: "race", IssuedAt: now.Unix()}
		rc := race{use: testkit.Seal(t, in, k), rev: testkit.Seal(t, rev, w.rootKey)}
		var wg sync.WaitGroup
		var useErr, revErr error
		wg.Add(2)
		go func() { defer wg.Done(); _, revErr = first.Append(ctx, [][]byte{rc.rev}) }()
		go func() { defer wg.Done(); _, useErr = second.Append(ctx, [][]byte{rc.use}) }()
		wg.Wait()
		if revErr != nil {
			t.Fatalf("round %d: the revocation: %v", r, revErr)
		}
		var refusal *logservice.Refusal
		switch {
		case useErr == nil:
			rc.used = true
		case errors.As(useErr, &refusal) && refusal.Status == http.StatusForbidden && refusal.Rule == rules.Revoked:
		default:
			t.Fatalf("round %d: the instruction by the key being revoked: %v", r, useErr)
		}
		races = append(races, rc)
	}
	// One more record through each writer, so that both hold the whole
	// log; then the bucket, as a runner reads it.
	_, recs := w.batch(1)
	var size int64
	for i, rec := range recs {
		c := []*logservice.Client{ca, cb}[i%2]
		got, err := c.Append(ctx, [][]byte{rec})
		if err != nil {
			t.Fatalf("record %d of the last batch: %v", i, err)
		}
		size = got.Checkpoint.Size
	}
	w.waitPublished(size)
	entries := w.replica(nginx)
	at := map[string]int{}
	for i, e := range entries {
		at[schemas.SHA256Digest(e)] = i
	}
	used := 0
	for r, rc := range races {
		iu, inLog := at[schemas.SHA256Digest(rc.use)]
		ir, revoked := at[schemas.SHA256Digest(rc.rev)]
		switch {
		case !revoked:
			t.Fatalf("round %d: the acknowledged revocation is not in the log", r)
		case rc.used != inLog || (inLog && iu > ir):
			t.Fatalf("round %d: instruction acknowledged %v, in the log %v (entry %d, the revocation %d)", r, rc.used, inLog, iu, ir)
		}
		if rc.used {
			used++
		}
	}
	if len(entries) != len(at) {
		t.Fatalf("%d entries, %d distinct", len(entries), len(at))
	}
	t.Logf("%d rounds: the instruction came first %d times, the revocation %d; %d entries", rounds, used, rounds-used, len(entries))
	w.takeBack(a, b, int64(len(entries)))
}

// takeBack stops the writers, takes the log back from the engine into
// W2 (which may lack the other writer's last batches), and checks that
// it holds the bucket's log and appends alone; a migrate into the
// engine its writers appended to is refused.
func (w *engineWorld) takeBack(a, b *exec.Cmd, size int64) {
	t := w.t
	stopWriter(t, a)
	stopWriter(t, b)
	run := func(args ...string) (string, int) {
		cmd := exec.Command("writ", append(args, w.args...)...)
		cmd.Dir, cmd.Env = w.dir, append(cmd.Environ(), w.env...)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	if out, code := run("--json", "ledger", "migrate", "--back", "--dir", "W2"); code != 0 || !strings.Contains(out, `"size":`+strconv.FormatInt(size, 10)+`}`) {
		t.Fatalf("migrate --back: exit %d\n%s\nwant size %d", code, out, size)
	}
	names, _ := w.batch(1)
	writIn(t, w.dir, append([]string{"ledger", "append", "--dir", "W2"}, names...)...)
	if out, code := run("ledger", "migrate", "--dir", "W2"); code != 1 || !strings.Contains(out, "writers append to the engine") {
		t.Fatalf("migrate into an engine writers appended to: exit %d\n%s\nwant 1", code, out)
	}
	// A writer on the copy appended to alone refuses every batch.
	cmd, c := w.writer("W2")
	defer stopWriter(t, cmd)
	_, recs := w.batch(0)
	var r *logservice.Refusal
	if _, err := c.Append(context.Background(), recs); !errors.As(err, &r) || r.Status != http.StatusServiceUnavailable || !strings.Contains(r.Err, "appended to without the engine") {
		t.Fatalf("a writer on a copy appended to without the engine: %v", err)
	}
	// Witness cosignatures are not gathered on an engine: refused at once.
	if out, code := run("ledger", "serve", "--write", "--dir", "W2", "--listen", "127.0.0.1:0", "--policy", "none.txt"); code != 2 || !strings.Contains(out, "--policy with --dsn") {
		t.Fatalf("serve --write --policy --dsn: exit %d\n%s\nwant 2", code, out)
	}
	if out, code := run("ledger", "serve", "--dir", "W2", "--listen", "127.0.0.1:0"); code != 2 || !strings.Contains(out, "--bucket is for the writer service") {
		t.Fatalf("serve --bucket without --write: exit %d\n%s\nwant 2", code, out)
	}
}

// stopWriter stops a writer service with SIGTERM, which must exit 0.
func stopWriter(t *testing.T, cmd *exec.Cmd) {
	if cmd.ProcessState != nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("a writer service after SIGTERM: %v", err)
	}
}
