package repair_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/repair"
	"github.com/writ-ledger/writ/ledger/replica"
)

// decisionsLog adds to the ledger directory dir a decision log holding
// one entry, and returns its store.
func decisionsLog(t *testing.T, dir string) string {
	t.Helper()
	store := filepath.Join(dir, ledgerdir.DecisionsDir)
	dec, err := ledger.Create(store, "example.com/decisions/0123456789abcdef", testkit.Key(t, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	if _, err := dec.Append([][]byte{[]byte("a decision")}); err != nil {
		t.Fatal(err)
	}
	return store
}

// TestUndoTakesEveryLockFirst: a repair rebuilt both logs; while another
// holder has the rebuilt decision log open, undoing it is refused with
// ErrLocked before the authority log is put back.
func TestUndoTakesEveryLockFirst(t *testing.T) {
	dir, _ := tabledLedger(t, "example.com/undo", 1, 3)
	decStore := decisionsLog(t, dir)
	for _, store := range []string{filepath.Join(dir, ledgerdir.AuthorityDir), decStore} {
		if err := testkit.DamageStore(store, testkit.ManifestTruncated); err != nil {
			t.Fatal(err)
		}
	}
	res, err := repair.Repair(dir, repair.RepairOptions{})
	if err != nil || len(res.Logs) != 2 || res.Logs[0].Action != "rebuilt" || res.Logs[1].Action != "rebuilt" {
		t.Fatalf("Repair = %+v, %v", res, err)
	}
	dec, err := ledger.Open(decStore, testkit.Key(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	before := testkit.Snapshot(t, dir)
	_, err = repair.UndoRepair(dir)
	after := testkit.Snapshot(t, dir)
	dec.Close()
	if !errors.Is(err, ledger.ErrLocked) {
		t.Fatalf("UndoRepair: %v, want ErrLocked", err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("an undo refused as busy changed the ledger directory")
	}
	if _, err := repair.UndoRepair(dir); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreLeavesUnexportedLogAside: both logs are damaged and the
// export holds only the authority log: the authority log is restored, the
// decision log stays set aside (the result says so), and the undo puts
// both back.
func TestRestoreLeavesUnexportedLogAside(t *testing.T) {
	dir, exports := tabledLedger(t, "example.com/aside", 1, 3)
	decStore := decisionsLog(t, dir)
	for _, store := range []string{filepath.Join(dir, ledgerdir.AuthorityDir), decStore} {
		if err := testkit.DamageStore(store, testkit.TableMissing); err != nil {
			t.Fatal(err)
		}
	}
	stores := map[string][]byte{}
	for _, store := range []string{filepath.Join(dir, ledgerdir.AuthorityDir), decStore} {
		stores[store] = testkit.Snapshot(t, store)
	}
	// Each store lost its only table holding its key: the keys are given.
	vkeys := map[string]*formats.LogKey{}
	for name, k := range map[string]struct {
		origin string
		n      byte
	}{ledgerdir.AuthorityDir: {"example.com/aside", 1}, ledgerdir.DecisionsDir: {"example.com/decisions/0123456789abcdef", 3}} {
		vkey, err := formats.NewLogKey(k.origin, testkit.Key(t, k.n).Public())
		if err != nil {
			t.Fatal(err)
		}
		vkeys[name] = vkey
	}
	res, err := repair.Repair(dir, repair.RepairOptions{VKeys: vkeys, Restore: restoreFrom(exports[2])})
	if err != nil || len(res.Logs) != 2 || res.Logs[0].Action != "restored" || res.Logs[0].Size != 9 || res.Logs[1].Action != "set-aside" {
		t.Fatalf("Repair = %+v, %v", res, err)
	}
	checkEntries(t, filepath.Join(dir, ledgerdir.AuthorityDir), entries(9))
	if _, err := repair.UndoRepair(dir); err != nil {
		t.Fatal(err)
	}
	for _, store := range []string{filepath.Join(dir, ledgerdir.AuthorityDir), decStore} {
		if !bytes.Equal(stores[store], testkit.Snapshot(t, store)) {
			t.Fatalf("undo did not put %s back", store)
		}
	}
}

// TestRestoreDecisionsUnderRunnerKey: a decision log whose store lost its
// only table, and with it the verifier key it stored: Repair trusts the
// key made from the directory's runner.pub under the decision log's
// origin (the authority origin, "/decisions/", the key id's first 16
// hex digits), refuses an export of another runner's decision log
// (vkey-mismatch) and restores its own.
func TestRestoreDecisionsUnderRunnerKey(t *testing.T) {
	dir, _ := tabledLedger(t, "example.com/runner", 1, 2)
	auth, err := ledger.OpenReadOnly(filepath.Join(dir, ledgerdir.AuthorityDir))
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	export := func(n byte, decDir string) string {
		key := testkit.Key(t, n)
		dec, err := ledger.Create(decDir, "example.com/runner/decisions/"+key.Public().ID()[:16], key, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer dec.Close()
		if _, err := dec.Append([][]byte{[]byte("a decision")}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "export")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := replica.Export(f, []string{"authority", "decisions"}, []*ledger.Log{auth, dec}); err != nil {
			t.Fatal(err)
		}
		return path
	}
	mine := export(3, filepath.Join(dir, ledgerdir.DecisionsDir))
	other := export(4, filepath.Join(t.TempDir(), "other"))
	auth.Close()
	if err := os.WriteFile(filepath.Join(dir, ledgerdir.RunnerKey+".pub"), testkit.Key(t, 3).Public().PEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	decStore := filepath.Join(dir, ledgerdir.DecisionsDir)
	if err := testkit.DamageStore(decStore, testkit.TableMissing); err != nil {
		t.Fatal(err)
	}
	before := testkit.Snapshot(t, decStore)
	res, err := repair.Repair(dir, repair.RepairOptions{Restore: restoreFrom(other)})
	var te *ledger.TrustError
	want := "example.com/runner/decisions/" + testkit.Key(t, 3).Public().ID()[:16] + "+"
	if !errors.As(err, &te) || te.Log != "decisions" || !strings.HasPrefix(te.Expected, want) {
		t.Fatalf("Repair from another runner's export = %+v, %v; want vkey-mismatch expecting %s", res, err, want)
	}
	// The import opened the whole authority log for writing (Badger
	// rewrites its bookkeeping files then): the damaged store is as it
	// was, and nothing was set aside.
	if !bytes.Equal(before, testkit.Snapshot(t, decStore)) {
		t.Fatal("a refused restore changed the damaged store")
	}
	if _, err := os.Stat(filepath.Join(dir, repair.SetAsideDir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused restore left %s: %v", repair.SetAsideDir, err)
	}
	res, err = repair.Repair(dir, repair.RepairOptions{Restore: restoreFrom(mine)})
	if err != nil || len(res.Logs) != 1 || res.Logs[0].Name != "decisions" || res.Logs[0].Size != 1 {
		t.Fatalf("Repair from its own export = %+v, %v", res, err)
	}
}
