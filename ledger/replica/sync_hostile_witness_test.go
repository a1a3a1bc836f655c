package replica_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// Hostile review of sync under a witness policy: an attack that succeeded
// before its fix, kept as a regression test.

// REGRESSION, once an attack (wrong-no, misleading yes): a replica holds the writer's
// refreshed checkpoint C2 (same tree, later log time, no cosignature;
// synced before the policy was set, or from another mirror). A sync under
// the policy from a source publishing the witnessed C1 of the same tree
// succeeds and reports "witnessed by a" (Synced.Witnessing.Met), but
// refresh() keeps C2 because its log time is later: the replica's stored
// checkpoint does not meet the policy, and a runner under the same
// policy refuses every dispatch (ledger-unwitnessed).
func TestHostileWitnessSyncReportsWitnessedKeepsUnwitnessed(t *testing.T) {
	w := newHistoryWriter(t)
	a := startWitness(t, "witness.example/a", 20, w.VerifierKey())
	policy := mustPolicy(t, "log "+w.VerifierKey()+"\nwitness a "+a.vkey+" "+a.url+"\nquorum a\n")
	w.add(t, 5)
	if _, err := collect(t, w.Log, policy); err != nil {
		t.Fatal(err)
	}
	witnessed := filepath.Join(t.TempDir(), "witnessed")
	w.publish(t, witnessed)
	w.now = w.now.Add(time.Minute)
	if err := w.Refresh(); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	w.publish(t, fresh)

	rdir := filepath.Join(t.TempDir(), "replica")
	if _, err := syncDir(t, rdir, fresh, w.VerifierKey()); err != nil {
		t.Fatal(err)
	}
	src, err := tiles.OpenSource(witnessed, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s, err := replica.Sync(context.Background(), rdir, src, replica.SyncOptions{VKey: w.Key(), History: true, Policy: policy})
	if err != nil {
		return // refused with a reason: acceptable
	}
	if s.Witnessing == nil || !s.Witnessing.Met {
		t.Fatalf("sync succeeded without reporting the quorum: %+v", s.Witnessing)
	}
	l, err := ledger.OpenReadOnly(rdir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	stored, err := l.CosignedCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := policy.Check(stored, w.Key(), time.Now()); err != nil {
		t.Fatalf("sync under the policy exited 0 reporting %v, but the replica holds a checkpoint the policy refuses: %v", s.Witnessing.Cosigned, err)
	}
}
