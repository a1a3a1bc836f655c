package verify_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/verify"
)

// TestReplicaSync: a replica grows from a published authority log with
// the append's checks, keeps its replayed state between syncs (a poll
// with nothing new is one request), and refuses a record the rules
// refuse, with its index and rule, keeping what it held.
func TestReplicaSync(t *testing.T) {
	root, op := testkit.Key(t, 1), testkit.Key(t, 2)
	auth := createAuthority(t, filepath.Join(t.TempDir(), "w"), "example.com/sync", testkit.Key(t, 9), nil)
	defer auth.Close()
	a, err := verify.LoadAuthority(auth, auth.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append([][]byte{testkit.Seal(t, testkit.Root(1, root), root)}); err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(t.TempDir(), "pub")
	publish := func() {
		t.Helper()
		if _, err := auth.Publish(pub); err != nil {
			t.Fatal(err)
		}
	}
	publish()
	src, err := tiles.OpenSource(pub, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r := &verify.Replica{Dir: filepath.Join(t.TempDir(), "runner"), Source: src, VKey: auth.VerifierKey()}
	if res, err := r.Sync(context.Background()); err != nil || res.After != 1 {
		t.Fatalf("first sync: %+v, %v", res, err)
	}
	if res, err := r.Sync(context.Background()); err != nil || res.Requests != 1 || res.After != 1 {
		t.Fatalf("steady state: %+v, %v (want one request)", res, err)
	}
	if _, err := a.Append([][]byte{testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "s", "m"), root)}); err != nil {
		t.Fatal(err)
	}
	publish()
	if res, err := r.Sync(context.Background()); err != nil || res.Before != 1 || res.After != 2 {
		t.Fatalf("second sync: %+v, %v", res, err)
	}
	// A delegation signed by the operator, who may not delegate, slipped
	// past the gate: the replica refuses it and keeps what it held.
	auth.SetGate(nil)
	if _, err := auth.Append([][]byte{testkit.Seal(t, testkit.Delegation(testkit.Key(t, 3), []string{"instruct"}, "s", "m"), op)}); err != nil {
		t.Fatal(err)
	}
	publish()
	_, err = r.Sync(context.Background())
	var re *delegation.RecordError
	if !errors.As(err, &re) || re.Index != 2 || !strings.Contains(err.Error(), "out-of-scope: the signer may not delegate") {
		t.Fatalf("sync of a refused record: %v", err)
	}
	l, err := ledger.OpenReadOnly(filepath.Join(r.Dir, ledger.AuthorityDir))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if cp, err := l.SignedHead(); err != nil || cp.Size != 2 {
		t.Fatalf("the replica after a refused sync: %+v, %v", cp, err)
	}
}
