package runner_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/stateview"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/audit"
	"github.com/writ-ledger/writ/verify/runner"
)

// TestImportExtendsPersistedState: an import into a new ledger writes
// its authority log's state index for every entry; an import that
// extends a ledger builds the state from the index the ledger persisted
// (or, when it has none, from a full replay, writing it again) and
// extends the index by the new entries: afterwards the index is bound to
// the new signed checkpoint, a reader extends it without a replay, and
// it is what a full replay of the log gives (audit.Run compares them).
func TestImportExtendsPersistedState(t *testing.T) {
	for _, dropped := range []bool{false, true} {
		t.Run(fmt.Sprintf("index dropped %v", dropped), func(t *testing.T) {
			r1, op, op2 := testkit.Key(t, 1), testkit.Key(t, 10), testkit.Key(t, 12)
			auth := createAuthority(t, filepath.Join(t.TempDir(), ledgerdir.AuthorityDir), "example.com/impstate", testkit.Key(t, 50), nil)
			defer auth.Close()
			appendAll := func(recs ...[]byte) {
				t.Helper()
				if _, err := auth.Append(recs); err != nil {
					t.Fatal(err)
				}
			}
			instr := func(n int) []byte { return testkit.Seal(t, testkit.Instruction(fmt.Sprintf("%032x", n)), op) }
			appendAll(testkit.Seal(t, testkit.Root(1, r1), r1), testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "demo", "runner-*"), r1))
			appendAll(instr(1), instr(2))
			appendAll(instr(3))
			rep := filepath.Join(t.TempDir(), "replica")
			if _, err := runner.ImportLedger(rep, exportOf(t, auth), nil, ""); err != nil {
				t.Fatal(err)
			}
			checkIndexed(t, rep, 5)
			if dropped {
				l, err := ledger.Open(filepath.Join(rep, ledgerdir.AuthorityDir), nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := stateview.NewIndex(l).Drop(); err != nil {
					t.Fatal(err)
				}
				l.Close()
			}

			appendAll(testkit.Seal(t, testkit.Delegation(op2, []string{"instruct"}, "demo", "runner-*"), r1), instr(4))
			appendAll(instr(5), testkit.Seal(t, testkit.Instruction(fmt.Sprintf("%032x", 6)), op2))
			logs, err := runner.ImportLedger(rep, exportOf(t, auth), nil, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(logs) != 1 || logs[0].Before != 5 || logs[0].After != 9 {
				t.Fatalf("imported %+v, want authority 5 to 9", logs)
			}
			checkIndexed(t, rep, 9)
			// A record already in the log is refused again, judged against
			// the persisted content keys.
			appendAll(instr(2))
			_, err = runner.ImportLedger(rep, exportOf(t, auth), nil, "")
			var re *delegation.RecordError
			if !errors.As(err, &re) || re.Index != 9 {
				t.Fatalf("an export repeating an instruction: %v, want a refusal of entry 9", err)
			}
			checkIndexed(t, rep, 9)
		})
	}
}

// checkIndexed checks the authority log of the ledger at dir: size n, its
// state index bound to its signed checkpoint, extended by a reader
// without a replay, and the same as a full replay's.
func checkIndexed(t *testing.T, dir string, n int64) {
	t.Helper()
	l, err := ledgerdir.OpenAuthority(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := l.SignedHead()
	if err != nil || cp.Size != n {
		l.Close()
		t.Fatalf("the replica's checkpoint: size %d (%v), want %d", cp.Size, err, n)
	}
	b, ok, err := stateview.NewIndex(l).Binding()
	if err != nil || !ok || b.Size != cp.Size || b.Root != cp.Hash {
		l.Close()
		t.Fatalf("the state binding %+v (%v %v), want the signed checkpoint's size %d", b, ok, err, cp.Size)
	}
	a, err := verify.LoadAuthority(l, nil)
	if err != nil || a.Replayed != "" {
		l.Close()
		t.Fatalf("LoadAuthority: %v, replayed %q; want the persisted state used", err, a.Replayed)
	}
	l.Close()
	r, err := audit.Run(audit.Dir(dir), audit.Options{})
	if err != nil || !r.OK || r.AuthorityEntries != n {
		t.Fatalf("audit (the index against a full replay): %v %+v", err, r)
	}
}
