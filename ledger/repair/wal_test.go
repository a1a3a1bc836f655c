package repair_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/repair"
)

// TestRepairFloorFromWriteAheadLog: a store left by a killed writer (its
// files copied while it was open) whose write-ahead log is changed in the
// middle of the last batch: Badger's replay cuts the log there, and the
// rebuilt log verifies at the batch before, but the write-ahead log still
// holds the newest signed checkpoint, and Repair refuses.
func TestRepairFloorFromWriteAheadLog(t *testing.T) {
	dir, _ := tabledLedger(t, "example.com/wal", 1, 2)
	store := filepath.Join(dir, ledgerdir.AuthorityDir)
	l, err := ledger.Open(store, testkit.Key(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	last := bytes.Repeat([]byte("the newest batch "), 200)
	if _, err := l.Append([][]byte{last}); err != nil {
		t.Fatal(err)
	}
	crashed, spoiled := filepath.Join(t.TempDir(), "ledger"), filepath.Join(t.TempDir(), "ledger")
	copyDir(t, store, filepath.Join(crashed, ledgerdir.AuthorityDir))
	copyDir(t, store, filepath.Join(spoiled, ledgerdir.AuthorityDir))
	l.Close()
	change := func(dir string, what []byte) {
		mems, _ := filepath.Glob(filepath.Join(dir, ledgerdir.AuthorityDir, "*.mem"))
		if len(mems) != 1 {
			t.Fatalf("write-ahead logs: %v", mems)
		}
		b, err := os.ReadFile(mems[0])
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for at := bytes.Index(b, what); at >= 0; at = bytes.Index(b, what) {
			copy(b[at+len(what)/2:], "XX")
			n++
		}
		if n == 0 {
			t.Fatalf("%q is not in the write-ahead log", what)
		}
		if err := os.WriteFile(mems[0], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	change(crashed, last)
	before := testkit.Snapshot(t, crashed)
	res, err := repair.Repair(crashed, repair.RepairOptions{})
	wantLost(t, crashed, before, res, err, "it needs at least 7 entries")
	// A change that also spoils every copy of the newest checkpoint leaves
	// nothing that shows it: the log is rebuilt at the batch before
	// (LIMITATIONS.md).
	change(spoiled, last)
	change(spoiled, []byte("example.com/wal\n7\n"))
	if res, err := repair.Repair(spoiled, repair.RepairOptions{}); err != nil || res.Logs[0].Action != "rebuilt" || res.Logs[0].Size != 6 {
		t.Fatalf("Repair = %+v, %v", res, err)
	}
}
