package runner_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/stateview"
	"github.com/writ-ledger/writ/verify"
)

// TestFirstSyncStateIndexMatchesWriter is a differential test of a new
// replica's state index, whose instructions' content keys the first sync
// bulk-loads sorted (verify.StateIndexer.Bulk), against the writer's,
// which its append gate extended record by record: the same content keys
// pointing at the same entries, the same marks, the same binding (its
// marks digest included); an act then uses the replica's persisted
// state without a replay. Marked records come before and after the
// instructions, so that the load skips marked entries in the middle.
func TestFirstSyncStateIndexMatchesWriter(t *testing.T) {
	root, op, op2 := testkit.Key(t, 1), testkit.Key(t, 2), testkit.Key(t, 3)
	recs := [][]byte{
		testkit.Seal(t, testkit.Root(1, root), root),
		testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "demo", "runner-1"), root),
	}
	for i := range 40 {
		recs = append(recs, testkit.Seal(t, testkit.Instruction(fmt.Sprintf("%032x", i)), op))
	}
	recs = append(recs, testkit.Seal(t, testkit.Delegation(op2, []string{"instruct"}, "demo", "runner-1"), root))
	for i := range 30 {
		recs = append(recs, testkit.Seal(t, testkit.Instruction(fmt.Sprintf("%032x", 1000+i)), op2))
	}
	auth, _ := gatedAuthority(t, recs...)
	r, _ := publishedReplica(t, auth)
	if res, err := r.Sync(context.Background()); err != nil || res.Before != 0 || res.After != int64(len(recs)) {
		t.Fatalf("first sync: %+v, %v; want 0 to %d", res, err, len(recs))
	}
	rl, err := ledger.OpenReadOnly(filepath.Join(r.Dir, ledgerdir.AuthorityDir))
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	want, got := indexDump(t, auth), indexDump(t, rl)
	if len(want) != len(got) || len(want) != 2+len(recs)+3 {
		t.Fatalf("the writer's state index holds %d items, the replica's %d; want %d each", len(want), len(got), 2+len(recs)+3)
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("item %d differs:\n writer:  %s\n replica: %s", i, want[i], got[i])
		}
	}
	a, err := verify.LoadAuthority(rl, nil)
	if err != nil || a.ReplayNote() != "" {
		t.Fatalf("an act's load of the new replica: %v, note %q; want its persisted state, no replay", err, a.ReplayNote())
	}
}

// indexDump returns l's state index as text: its binding, then its marks,
// then its content keys in key order.
func indexDump(t *testing.T, l *ledger.Log) []string {
	t.Helper()
	x := stateview.NewIndex(l)
	b, ok, err := x.Binding()
	if err != nil || !ok {
		t.Fatalf("binding: %v, %v", ok, err)
	}
	out := []string{fmt.Sprintf("binding %d %x %x", b.Size, b.Root, b.Marks)}
	marks, err := x.Marks(l.Size())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range marks {
		out = append(out, fmt.Sprintf("mark %d %s", m.Index, m.Kind))
	}
	out = append(out, fmt.Sprintf("%d marks", len(marks)))
	err = x.SeenKeys(func(c [32]byte, i int64) error {
		out = append(out, fmt.Sprintf("seen %x %d", c, i))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
