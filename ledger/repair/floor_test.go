package repair_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/repair"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
)

// tabledLedger makes a ledger directory whose authority log (origin,
// key testkit.Key(keyN)) holds batches batches of 3 entries, each batch
// written by an open of its own, so that each lies in a table of its
// own; it returns the directory and an export made after each batch.
func tabledLedger(t *testing.T, origin string, keyN byte, batches int) (string, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ledger")
	store := filepath.Join(dir, ledgerdir.AuthorityDir)
	l, err := ledger.CreateWithHistory(store, origin, testkit.Key(t, keyN), nil)
	if err != nil {
		t.Fatal(err)
	}
	all := entries(3 * batches)
	var exports []string
	for b := range batches {
		if b > 0 {
			if l, err = ledger.Open(store, testkit.Key(t, keyN)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.Append(all[3*b : 3*b+3]); err != nil {
			t.Fatal(err)
		}
		export := filepath.Join(t.TempDir(), fmt.Sprintf("export-%d", b))
		f, err := os.Create(export)
		if err != nil {
			t.Fatal(err)
		}
		if err := replica.Export(f, []string{"authority"}, []*ledger.Log{l}); err != nil {
			t.Fatal(err)
		}
		f.Close()
		exports = append(exports, export)
		l.Close()
	}
	return dir, exports
}

// tables returns the table files of the store, by id.
func tables(t *testing.T, store string) []string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(store, "*.sst"))
	slices.Sort(names)
	if len(names) < 3 {
		t.Fatalf("%s: %d tables, want several", store, len(names))
	}
	return names
}

// restoreFrom is RepairOptions.Restore importing export under the trust
// Repair gives.
func restoreFrom(export string) func(string, repair.RestoreTrust) error {
	return func(d string, trust repair.RestoreTrust) error {
		_, err := replica.ImportWith(d, export, replica.ImportOptions{Trusted: trust.VKeys, TrustedKeys: trust.Keys, Floors: trust.Floors})
		return err
	}
}

// wantLost checks that Repair refused with a *StoreError with Lost set
// whose message holds want, and changed nothing in dir.
func wantLost(t *testing.T, dir string, before []byte, res *repair.RepairResult, err error, want string) {
	t.Helper()
	var se *ledger.StoreError
	if !errors.As(err, &se) || !se.Lost || se.Rule() != rules.StoreUnrecovered || !strings.Contains(err.Error(), want) {
		t.Fatalf("Repair = %+v, %v; want store-unrecoverable naming %q", res, err, want)
	}
	if !bytes.Equal(before, testkit.Snapshot(t, dir)) {
		t.Fatal("a refused repair changed the ledger directory")
	}
}

// TestRepairRefusesLostNewestTable: the table holding the newest entries
// and their signed checkpoint does not read back. The store without it
// verifies against the checkpoint before, but Repair must not keep it (the
// next append would sign a second tree of that size): the MANIFEST lists
// the table, so the entries are lost from these files. Likewise when the
// MANIFEST is gone too, as nothing then says the table was not needed.
func TestRepairRefusesLostNewestTable(t *testing.T) {
	for _, manifest := range []bool{true, false} {
		dir, _ := tabledLedger(t, "example.com/newest", 1, 4)
		store := filepath.Join(dir, ledgerdir.AuthorityDir)
		names := tables(t, store)
		if err := os.Truncate(names[len(names)-1], 100); err != nil {
			t.Fatal(err)
		}
		want := filepath.Base(names[len(names)-1]) + " does not read back, and the MANIFEST lists it"
		if !manifest {
			os.Remove(filepath.Join(store, "MANIFEST"))
			want = "cannot say whether the store needs it"
		}
		before := testkit.Snapshot(t, dir)
		res, err := repair.Repair(dir, repair.RepairOptions{})
		wantLost(t, dir, before, res, err, want)
	}
}

// TestRepairFloorFromDecisions: the MANIFEST lost its last record (cut at
// a record's end, so it reads back whole) and the newest table is
// damaged: nothing in the store shows the newest checkpoint, but the
// decision log recorded a decision judged against it; Repair refuses.
func TestRepairFloorFromDecisions(t *testing.T) {
	dir, _ := tabledLedger(t, "example.com/decided", 1, 4)
	store := filepath.Join(dir, ledgerdir.AuthorityDir)
	l, err := ledger.OpenReadOnly(store)
	if err != nil {
		t.Fatal(err)
	}
	size := l.Size()
	root, err := l.TreeHash(size)
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	names := tables(t, store)
	cutLastRecord(t, filepath.Join(store, "MANIFEST"))
	if err := os.Truncate(names[len(names)-1], 100); err != nil {
		t.Fatal(err)
	}
	// Without the decision log nothing in the directory shows the newest
	// checkpoint: the rebuilt log is the older one (LIMITATIONS.md).
	alone := filepath.Join(t.TempDir(), "ledger")
	copyDir(t, store, filepath.Join(alone, ledgerdir.AuthorityDir))
	if res, err := repair.Repair(alone, repair.RepairOptions{}); err != nil || res.Logs[0].Action != "rebuilt" || res.Logs[0].Size != size-3 {
		t.Fatalf("Repair without the decision log = %+v, %v", res, err)
	}
	dec, err := ledger.Create(filepath.Join(dir, ledgerdir.DecisionsDir), "example.com/decided/decisions/0123456789abcdef", testkit.Key(t, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &schemas.Decision{V: 1, Time: time.Now().Unix(), Machine: "m", Mode: "enforce", Verdict: schemas.Verdicts[0], Rule: "ok",
		InstructionDigest: "sha256:" + strings.Repeat("ab", 32), AuthoritySize: size, AuthorityRoot: hex.EncodeToString(root[:])}
	rec, err := schemas.Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dec.Append([][]byte{rec}); err != nil {
		t.Fatal(err)
	}
	dec.Close()
	before := testkit.Snapshot(t, dir)
	res, err := repair.Repair(dir, repair.RepairOptions{})
	wantLost(t, dir, before, res, err, fmt.Sprintf("it needs at least %d entries", size))
	if !strings.Contains(err.Error(), "decision log") {
		t.Fatalf("the refusal does not say where the checkpoint was found: %v", err)
	}
}

// cutLastRecord truncates a Badger MANIFEST at the end of its
// second-to-last record.
func cutLastRecord(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ends := []int{}
	for off := 8; off+8 <= len(b); {
		off += 8 + int(binary.BigEndian.Uint32(b[off:]))
		ends = append(ends, off)
	}
	if len(ends) < 2 || ends[len(ends)-1] != len(b) {
		t.Fatalf("MANIFEST records end at %v of %d bytes", ends, len(b))
	}
	if err := os.Truncate(path, int64(ends[len(ends)-2])); err != nil {
		t.Fatal(err)
	}
}

// TestRepairRestoreFloor: a store that lost a middle table still holds its
// newest signed checkpoint; restoring an older export of the same log
// would roll back the entries after it, and is refused with nothing
// changed, naming the size it needs; the newest export restores.
func TestRepairRestoreFloor(t *testing.T) {
	dir, exports := tabledLedger(t, "example.com/floor", 1, 4)
	store := filepath.Join(dir, ledgerdir.AuthorityDir)
	if err := os.Remove(tables(t, store)[1]); err != nil {
		t.Fatal(err)
	}
	before := testkit.Snapshot(t, dir)
	res, err := repair.Repair(dir, repair.RepairOptions{})
	wantLost(t, dir, before, res, err, "is missing, and the MANIFEST lists it")
	res, err = repair.Repair(dir, repair.RepairOptions{Restore: restoreFrom(exports[0])})
	wantLost(t, dir, before, res, err, "it needs at least 12 entries")
	var inc *ledger.InconsistencyError
	if !errors.As(err, &inc) || inc.Trusted.Size != 12 || inc.Found.Size != 3 {
		t.Fatalf("the refusal carries no evidence: %v", err)
	}
	res, err = repair.Repair(dir, repair.RepairOptions{Restore: restoreFrom(exports[3])})
	if err != nil || len(res.Logs) != 1 || res.Logs[0].Size != 12 {
		t.Fatalf("Repair from the newest export = %+v, %v", res, err)
	}
	checkEntries(t, store, entries(12))
}

// TestRepairRestoreOtherLedger: without a key given, Repair trusts the key
// the damaged store holds, and refuses the export of another ledger (its
// own origin and key) with nothing changed.
func TestRepairRestoreOtherLedger(t *testing.T) {
	dir, _ := tabledLedger(t, "example.com/mine", 1, 3)
	_, other := tabledLedger(t, "example.com/other", 2, 3)
	store := filepath.Join(dir, ledgerdir.AuthorityDir)
	if err := os.Remove(tables(t, store)[1]); err != nil {
		t.Fatal(err)
	}
	before := testkit.Snapshot(t, dir)
	res, err := repair.Repair(dir, repair.RepairOptions{Restore: restoreFrom(other[2])})
	var te *ledger.TrustError
	if !errors.As(err, &te) || te.Rule != rules.VKeyMismatch || !strings.HasPrefix(te.Expected, "example.com/mine+") {
		t.Fatalf("Repair = %+v, %v; want vkey-mismatch", res, err)
	}
	if !bytes.Equal(before, testkit.Snapshot(t, dir)) {
		t.Fatal("a refused restore changed the ledger directory")
	}
}

// TestRepairTakesEveryLockFirst: while another holder has the decision
// log open, a repair of the damaged authority log, rebuilt or restored,
// is refused with ErrLocked before anything changes.
func TestRepairTakesEveryLockFirst(t *testing.T) {
	dir, exports := tabledLedger(t, "example.com/busy", 1, 3)
	dec, err := ledger.Create(filepath.Join(dir, ledgerdir.DecisionsDir), "example.com/busy/decisions/0123456789abcdef", testkit.Key(t, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	if err := testkit.DamageStore(filepath.Join(dir, ledgerdir.AuthorityDir), testkit.ManifestTruncated); err != nil {
		t.Fatal(err)
	}
	before := testkit.Snapshot(t, dir)
	for _, restore := range []func(string, repair.RestoreTrust) error{nil, restoreFrom(exports[2])} {
		res, err := repair.Repair(dir, repair.RepairOptions{Restore: restore})
		if !errors.Is(err, ledger.ErrLocked) {
			t.Fatalf("Repair = %+v, %v; want ErrLocked", res, err)
		}
		if !bytes.Equal(before, testkit.Snapshot(t, dir)) {
			t.Fatal("a repair refused as busy changed the ledger directory")
		}
	}
}
