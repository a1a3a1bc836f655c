package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// TestMigrateToEngine: ledger migrate copies a Badger authority log, on
// real MariaDB and versitygw servers, into Tessera's AWS layout with
// writ's history bundles and the signed checkpoint; a replica syncs from
// the bucket's files through nginx exactly as from a publication (the
// same size and root, every entry replayed); a second migrate after more
// appends copies what is new; a log with a changed entry, or another
// log into this one's bucket, is refused (exit 1), an engine that does not answer is exit 4 with nothing
// claimed, and no credentials is exit 2.
func TestMigrateToEngine(t *testing.T) {
	db, store := testkit.MariaDBForTest(t), testkit.S3ForTest(t)
	w := newCrashWorld(t, "example.com/engine")
	appendBatch := func(n int) {
		names, _ := w.batch(n)
		writIn(t, w.dir, append([]string{"ledger", "append", "--dir", "W"}, names...)...)
	}
	appendBatch(150)
	appendBatch(150) // past one full bundle of 256
	dsn, err := db.CreateDatabase("writ")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateBucket(context.Background(), "log"); err != nil {
		t.Fatal(err)
	}
	env := []string{"WRIT_ENGINE_DSN=" + dsn, "AWS_ACCESS_KEY_ID=" + store.AccessKey, "AWS_SECRET_ACCESS_KEY=" + store.SecretKey}
	migrate := func(env []string) (map[string]any, string, int) {
		cmd := exec.Command("writ", "--json", "ledger", "migrate", "--dir", "W", "--bucket", "log", "--s3-endpoint", store.Endpoint)
		cmd.Dir, cmd.Env = w.dir, append(os.Environ(), env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, _ := cmd.Output()
		var res map[string]any
		json.Unmarshal(out, &res)
		return res, string(out) + stderr.String(), cmd.ProcessState.ExitCode()
	}
	srcRoot := func() (float64, string) {
		var cp map[string]any
		json.Unmarshal([]byte(writIn(t, w.dir, "--json", "ledger", "checkpoint", "--dir", "W")), &cp)
		size, _ := cp["size"].(float64)
		root, _ := cp["root_hash"].(string)
		return size, root
	}
	nginx := testkit.Nginx(t, filepath.Join(store.Root, "log"))
	// 310 entries: bundles 0 (full) and 1 (partial); then 354: bundle 1 again.
	wantHistory := []float64{2, 1}
	for round := range 2 {
		res, out, code := migrate(env)
		size, _ := srcRoot()
		if code != 0 || res["size"] != size || res["history_bundles"] != wantHistory[round] {
			t.Fatalf("round %d: migrate: exit %d\n%s\nwant size %v", round, code, out, size)
		}
		synced := writIn(t, w.dir, "--json", "ledger", "sync", "--dir", "R", "--from", nginx, "--vkey", w.vkey.String())
		if !strings.Contains(synced, `"after":`+jsonNumber(size)) {
			t.Fatalf("round %d: a replica's sync from the bucket through nginx:\n%s\nwant after %v", round, synced, size)
		}
		// Once on the engine, the directory appends only through the
		// engine's writers: alone, it would fork from the engine's log.
		names, _ := w.batch(40)
		cmd := exec.Command("writ", append([]string{"ledger", "append", "--dir", "W"}, names...)...)
		cmd.Dir, cmd.Env = w.dir, append(os.Environ(), "WRIT_PASSPHRASE="+floodPassphrase)
		if out, _ := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "nothing appended: the log is on a distributed engine (bucket log ") {
			t.Fatalf("round %d: a local append to a log on the engine: exit %d\n%s\nwant 2", round, cmd.ProcessState.ExitCode(), out)
		}
		// The fence lifted by hand (no writer ever ran): appended alone,
		// migrated again, what is new is copied.
		if err := os.Remove(filepath.Join(w.dir, "W", ledgerdir.EngineFile)); err != nil {
			t.Fatal(err)
		}
		appendBatch(40)
	}
	// The database already has the tree, the bucket is new: Tessera copies
	// nothing, and the bucket lacks the tiles a checkpoint would point at.
	if err := store.CreateBucket(context.Background(), "empty"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("writ", "ledger", "migrate", "--dir", "W", "--bucket", "empty", "--s3-endpoint", store.Endpoint)
	cmd.Dir, cmd.Env = w.dir, append(os.Environ(), env...)
	if out, _ := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "the engine holds another log: it lacks tile/") {
		t.Errorf("migrate into a fresh bucket beside a database that has the tree: exit %d\n%s\nwant 1", cmd.ProcessState.ExitCode(), out)
	}
	if _, err := os.Stat(filepath.Join(store.Root, "empty", "checkpoint")); err == nil {
		t.Error("a checkpoint was written into a bucket without the tiles")
	}
	// A history checkpoint's signature changed: the log does not verify
	// (a replica would refuse its history), nothing is copied.
	hist := filepath.Join(w.dir, "H")
	if out, err := exec.Command("cp", "-a", filepath.Join(w.dir, "W"), hist).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := testkit.EditStore(filepath.Join(hist, "authority"), func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{'c'}})
		defer it.Close()
		it.Rewind()
		v, err := it.Item().ValueCopy(nil)
		if err != nil {
			return err
		}
		v[len(v)-5] ^= 1 // inside the last signature's base64
		return txn.Set(it.Item().KeyCopy(nil), v)
	}); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command("writ", "ledger", "migrate", "--dir", "H", "--bucket", "log", "--s3-endpoint", store.Endpoint)
	cmd.Dir, cmd.Env = w.dir, append(os.Environ(), env...)
	if out, _ := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "the authority log does not verify, nothing migrated") {
		t.Errorf("migrate of a log with a changed history checkpoint: exit %d\n%s\nwant 1", cmd.ProcessState.ExitCode(), out)
	}
	// A stored entry changed: the log does not verify, nothing is copied.
	if err := testkit.FlipStoredEntry(filepath.Join(w.dir, "W", "authority"), 5); err != nil {
		t.Fatal(err)
	}
	fresh, err := db.CreateDatabase("fresh")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateBucket(context.Background(), "fresh"); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command("writ", "ledger", "migrate", "--dir", "W", "--bucket", "fresh", "--s3-endpoint", store.Endpoint)
	cmd.Dir, cmd.Env = w.dir, append(os.Environ(), "WRIT_ENGINE_DSN="+fresh, env[1], env[2])
	if out, _ := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "the authority log does not verify, nothing migrated") || !strings.Contains(string(out), "entry 5") {
		t.Errorf("migrate of a log whose entry 5 was changed: exit %d\n%s\nwant 1", cmd.ProcessState.ExitCode(), out)
	}
	if _, err := os.Stat(filepath.Join(store.Root, "fresh", "checkpoint")); err == nil {
		t.Error("a checkpoint was written for the refused migration")
	}
	// Another log into this one's bucket: refused before anything is written.
	other := newCrashWorld(t, "example.com/other")
	cmd = exec.Command("writ", "ledger", "migrate", "--dir", filepath.Join(other.dir, "W"), "--bucket", "log", "--s3-endpoint", store.Endpoint)
	cmd.Env = append(os.Environ(), env...)
	if out, _ := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "the engine holds another log: its checkpoint does not verify under this log's key") {
		t.Errorf("migrate of another log into this one's bucket: exit %d\n%s\nwant 1", cmd.ProcessState.ExitCode(), out)
	}
	if _, out, code := migrate([]string{"WRIT_ENGINE_DSN=root@tcp(127.0.0.1:1)/writ", "AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=y"}); code != 4 || !strings.Contains(out, "nothing migrated past what the engine holds: the engine is unavailable: the database root@tcp(127.0.0.1:1)/writ") {
		t.Errorf("migrate to a database that does not answer: exit %d\n%s\nwant 4", code, out)
	}
	if _, out, code := migrate([]string{"WRIT_ENGINE_DSN=" + dsn, "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent", "AWS_CONFIG_FILE=/nonexistent"}); code != 2 || !strings.Contains(out, "no credentials") {
		t.Errorf("migrate without credentials: exit %d\n%s\nwant 2", code, out)
	}
}

// jsonNumber is n as encoding/json prints a whole float64.
func jsonNumber(n float64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
