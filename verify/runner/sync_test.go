package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

// gatedAuthority creates an authority log (closed when the test ends)
// whose appends go through the authority checks, and appends records.
func gatedAuthority(t *testing.T, records ...[]byte) (*ledger.Log, *verify.Authority) {
	t.Helper()
	auth := createAuthority(t, filepath.Join(t.TempDir(), "w"), "example.com/sync", testkit.Key(t, 9), nil)
	t.Cleanup(func() { auth.Close() })
	a, err := verify.LoadAuthority(auth, auth.Key())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(records); err != nil {
		t.Fatal(err)
	}
	return auth, a
}

// TestReplicaSync: a replica grows from a published authority log with
// the append's checks, keeps its replayed state between syncs (a poll
// with nothing new is one request), and refuses a record the rules
// refuse, with its index and rule, keeping what it held.
func TestReplicaSync(t *testing.T) {
	root, op := testkit.Key(t, 1), testkit.Key(t, 2)
	auth, a := gatedAuthority(t, testkit.Seal(t, testkit.Root(1, root), root))
	r, republish := publishedReplica(t, auth)
	if res, err := r.Sync(context.Background()); err != nil || res.After != 1 {
		t.Fatalf("first sync: %+v, %v", res, err)
	}
	if res, err := r.Sync(context.Background()); err != nil || res.Requests != 1 || res.After != 1 {
		t.Fatalf("steady state: %+v, %v (want one request)", res, err)
	}
	if _, err := a.Append([][]byte{testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "s", "m"), root)}); err != nil {
		t.Fatal(err)
	}
	republish()
	if res, err := r.Sync(context.Background()); err != nil || res.Before != 1 || res.After != 2 {
		t.Fatalf("second sync: %+v, %v", res, err)
	}
	// A delegation signed by the operator, who may not delegate, slipped
	// past the gate: the replica refuses it and keeps what it held.
	auth.SetGate(nil)
	if _, err := auth.Append([][]byte{testkit.Seal(t, testkit.Delegation(testkit.Key(t, 3), []string{"instruct"}, "s", "m"), op)}); err != nil {
		t.Fatal(err)
	}
	republish()
	_, err := r.Sync(context.Background())
	var re *delegation.RecordError
	if !errors.As(err, &re) || re.Index != 2 || !strings.Contains(err.Error(), "out-of-scope: the signer may not delegate") {
		t.Fatalf("sync of a refused record: %v", err)
	}
	l, err := ledger.OpenReadOnly(filepath.Join(r.Dir, ledgerdir.AuthorityDir))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if cp, err := l.SignedHead(); err != nil || cp.Size != 2 {
		t.Fatalf("the replica after a refused sync: %+v, %v", cp, err)
	}
}

// TestSyncForgedEntryBlamesSource: a source that forges one well-formed
// record in the middle of a batch is blamed (a *replica.SourceError), not
// the writer's log (a *delegation.RecordError): a record's refusal counts
// only once its batch is proven to be the signed one. (Hostile review.)
func TestSyncForgedEntryBlamesSource(t *testing.T) {
	root, op := testkit.Key(t, 1), testkit.Key(t, 2)
	auth, _ := gatedAuthority(t,
		testkit.Seal(t, testkit.Root(1, root), root),
		testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "s", "m"), root),
		testkit.Seal(t, testkit.Delegation(testkit.Key(t, 4), []string{"instruct"}, "s", "m"), root))
	pub := filepath.Join(t.TempDir(), "pub")
	if _, err := publish.Publish(auth, pub); err != nil {
		t.Fatal(err)
	}
	// Forge entry 1: a well-framed record the writer never signed.
	name := filepath.Join(pub, "tile/entries/000.p/3")
	b, _ := os.ReadFile(name)
	entries, err := tiles.ParseBundle(b, 3)
	if err != nil {
		t.Fatal(err)
	}
	forged := testkit.Seal(t, testkit.Delegation(testkit.Key(t, 3), []string{"instruct"}, "s", "m"), op)
	var out []byte
	for i, e := range entries {
		if i == 1 {
			e = forged
		}
		out, _ = tiles.AppendBundle(out, e)
	}
	os.WriteFile(name, out, 0o644)
	src, _ := tiles.OpenSource(pub, time.Second)
	r := &runner.Replica{Dir: filepath.Join(t.TempDir(), "runner"), Source: src, VKey: auth.Key()}
	_, err = r.Sync(context.Background())
	var re *delegation.RecordError
	var se *replica.SourceError
	if errors.As(err, &re) || !errors.As(err, &se) || se.Path != "tile/entries/000.p/3" {
		t.Fatalf("a forged entry: %v", err)
	}
}

// publishedReplica publishes auth (tlog-tiles) into a new directory and
// returns a Replica syncing from it into a new runner directory under
// auth's key, and a function that publishes auth again.
func publishedReplica(t *testing.T, auth *ledger.Log) (*runner.Replica, func()) {
	t.Helper()
	pub := filepath.Join(t.TempDir(), "pub")
	republish := func() {
		t.Helper()
		if _, err := publish.Publish(auth, pub); err != nil {
			t.Fatal(err)
		}
	}
	republish()
	src, err := tiles.OpenSource(pub, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return &runner.Replica{Dir: filepath.Join(t.TempDir(), "runner"), Source: src, VKey: auth.Key()}, republish
}
