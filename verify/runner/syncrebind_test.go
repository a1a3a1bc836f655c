package runner_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/stateview"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

// TestSyncRebindsOnlyAMatchingIndex (found in review): a long-lived
// Replica (sync --watch) may keep its state between polls only while the
// replica's state index is bound to its checkpoint. If the index was
// dropped between two polls (another process's rebuild, killed after the
// drop), the next poll must build its state again rather than judge
// duplicates against an index that holds no content keys: a duplicate
// the source publishes is refused as duplicate-record, and nothing of it
// is stored.
func TestSyncRebindsOnlyAMatchingIndex(t *testing.T) {
	root, op := testkit.Key(t, 1), testkit.Key(t, 2)
	instr := testkit.Seal(t, testkit.Instruction("0123456789abcdef0123456789abcdef"), op)
	auth, _ := gatedAuthority(t,
		testkit.Seal(t, testkit.Root(1, root), root),
		testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "demo", "runner-1"), root),
		instr)
	r, republish := publishedReplica(t, auth)
	if res, err := r.Sync(context.Background()); err != nil || res.After != 3 {
		t.Fatalf("first sync: %+v, %v", res, err)
	}
	// Between two polls another process drops the replica's index and is
	// killed before writing it again (the checkpoint is unchanged).
	rl, err := ledger.Open(filepath.Join(r.Dir, ledgerdir.AuthorityDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := stateview.NewIndex(rl).Drop(); err != nil {
		t.Fatal(err)
	}
	rl.Close()
	// The source publishes a duplicate of entry 2 (it slipped past the
	// writer's gate).
	auth.SetGate(nil)
	if _, err := auth.Append([][]byte{instr}); err != nil {
		t.Fatal(err)
	}
	republish()
	_, err = r.Sync(context.Background())
	t.Logf("sync of the duplicate: %v", err)
	var re *delegation.RecordError
	if !errors.As(err, &re) || re.Rule != delegation.RuleDuplicate {
		t.Errorf("sync of a duplicate: want a %s refusal, got %v", delegation.RuleDuplicate, err)
	}
	l, err := ledger.OpenReadOnly(filepath.Join(r.Dir, ledgerdir.AuthorityDir))
	if err != nil {
		t.Fatal(err)
	}
	if cp, err := l.SignedHead(); err != nil || cp.Size != 3 {
		t.Errorf("the replica after a refused sync holds %d entries (%v), want 3: the duplicate was stored", cp.Size, err)
	}
	l.Close()
	_, err = r.Sync(context.Background())
	t.Logf("the next sync (no growth: refresh path, no checks): %v", err)
	l, err = ledger.OpenReadOnly(filepath.Join(r.Dir, ledgerdir.AuthorityDir))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = verify.LoadAuthority(l, nil)
	t.Logf("an act's load of the replica now: %v", err)
}

// TestSyncKeptStateRefusesDuplicate: the same sequence without the index loss
// refuses the duplicate and keeps 3 entries (the expected behaviour).
func TestSyncKeptStateRefusesDuplicate(t *testing.T) {
	root, op := testkit.Key(t, 1), testkit.Key(t, 2)
	instr := testkit.Seal(t, testkit.Instruction("0123456789abcdef0123456789abcdef"), op)
	auth, _ := gatedAuthority(t,
		testkit.Seal(t, testkit.Root(1, root), root),
		testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "demo", "runner-1"), root),
		instr)
	pub := filepath.Join(t.TempDir(), "pub")
	if _, err := publish.Publish(auth, pub); err != nil {
		t.Fatal(err)
	}
	src, _ := tiles.OpenSource(pub, time.Second)
	r := &runner.Replica{Dir: filepath.Join(t.TempDir(), "runner"), Source: src, VKey: auth.Key()}
	if _, err := r.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	auth.SetGate(nil)
	if _, err := auth.Append([][]byte{instr}); err != nil {
		t.Fatal(err)
	}
	if _, err := publish.Publish(auth, pub); err != nil {
		t.Fatal(err)
	}
	_, err := r.Sync(context.Background())
	var re *delegation.RecordError
	if !errors.As(err, &re) || re.Rule != delegation.RuleDuplicate || re.Index != 3 {
		t.Fatalf("control: %v", err)
	}
}
