package repair_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/repair"
	"github.com/writ-ledger/writ/ledger/replica"
)

// storeDamage is one kind of damage the crash and corruption tests can
// make to a log's Badger store (testkit.DamageStore).
var storeDamage = []struct {
	kind testkit.Damage
	// lost is set when the entries are gone with the damaged file (in a
	// small log, every entry is in one table): Repair refuses and the
	// ledger is restored from its export.
	lost bool
}{
	{testkit.ManifestTruncated, false},
	{testkit.ManifestMissing, false},
	{testkit.TableChanged, true},
	{testkit.TableMissing, true},
	{testkit.TableTruncated, true},
	{testkit.ValueLogChanged, false},
	{testkit.ValueLogEmpty, false},
}

// TestRepairEachDamage: for each damage, opening the log is refused with
// a *StoreError (rule store-damaged) naming a file, and nothing in the
// store changes; Repair rebuilds a store in which every entry verifies,
// or, when the entries went with the damaged file, refuses (Lost) and
// changes nothing, and Repair with Restore brings back the export; either
// way every entry verified before the damage is there, and UndoRepair
// puts the damaged store back.
func TestRepairEachDamage(t *testing.T) {
	for _, tc := range storeDamage {
		t.Run(string(tc.kind), func(t *testing.T) {
			dir, want, export, vkey := damagedLedger(t, tc.kind)
			store := filepath.Join(dir, ledgerdir.AuthorityDir)
			before := testkit.Snapshot(t, store)
			err := openVerifyErr(store)
			var se *ledger.StoreError
			if !errors.Is(err, ledger.ErrTampered) {
				t.Fatalf("read-only open and verify: %v, want tamper evidence", err)
			}
			// An open for writing refuses too, before Badger writes
			// anything, except where it recovers what a kill left (an
			// empty value log holds nothing), or where the damage is in
			// a block Badger does not read as it opens a table (found
			// when the block is read, as above).
			if tc.kind != testkit.ValueLogEmpty && tc.kind != testkit.TableChanged {
				if l, err := ledger.Open(store, nil); !errors.As(err, &se) {
					if err == nil {
						l.Close()
					}
					t.Fatalf("open for writing: %v, want a *StoreError", err)
				}
			}
			if after := testkit.Snapshot(t, store); !bytes.Equal(before, after) {
				t.Fatal("a refused open changed the store")
			}
			res, err := repair.Repair(dir, repair.RepairOptions{})
			if tc.lost {
				if !errors.As(err, &se) || !se.Lost {
					t.Fatalf("Repair = %+v, %v; want a refusal: the entries are gone", res, err)
				}
				if after := testkit.Snapshot(t, store); !bytes.Equal(before, after) {
					t.Fatal("a refused repair changed the store")
				}
				// The store lost its verifier key with its only table, and
				// the directory keeps no checkpoint.pub: the key is given.
				vkeys := map[string]*formats.LogKey{ledgerdir.AuthorityDir: testLogKey(t, vkey)}
				res, err = repair.Repair(dir, repair.RepairOptions{VKeys: vkeys, Restore: func(d string, trust repair.RestoreTrust) error {
					_, err := replica.ImportWith(d, export, replica.ImportOptions{Trusted: trust.VKeys, TrustedKeys: trust.Keys, Floors: trust.Floors})
					return err
				}})
			}
			if err != nil {
				t.Fatalf("Repair: %v", err)
			}
			if res.SetAside == "" || len(res.Logs) != 1 || res.Logs[0].Size != int64(len(want)) {
				t.Fatalf("Repair = %+v", res)
			}
			checkEntries(t, store, want)
			if _, err := repair.UndoRepair(dir); err != nil {
				t.Fatal(err)
			}
			if after := testkit.Snapshot(t, store); !bytes.Equal(before, after) {
				t.Fatal("undo did not put the damaged store back as it was")
			}
			if _, err := repair.UndoRepair(dir); !errors.Is(err, repair.ErrNoRepair) {
				t.Fatalf("a second undo: %v", err)
			}
		})
	}
}

// damagedLedger makes a ledger directory whose authority log holds 30
// entries, exports it, damages its store, and returns the directory, the
// entries, the export's path and the log's verifier key.
func damagedLedger(t *testing.T, kind testkit.Damage) (string, [][]byte, string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ledger")
	l, err := ledger.CreateWithHistory(filepath.Join(dir, ledgerdir.AuthorityDir), "example.com/damage", testkit.Key(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := entries(30)
	for i := 0; i < len(want); i += 10 {
		if _, err := l.Append(want[i : i+10]); err != nil {
			t.Fatal(err)
		}
	}
	export := filepath.Join(t.TempDir(), "export")
	f, err := os.Create(export)
	if err != nil {
		t.Fatal(err)
	}
	if err := replica.Export(f, []string{"authority"}, []*ledger.Log{l}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	vkey := l.VerifierKey()
	l.Close()
	if err := testkit.DamageStore(filepath.Join(dir, ledgerdir.AuthorityDir), kind); err != nil {
		t.Fatal(err)
	}
	return dir, want, export, vkey
}

// checkEntries opens the log at store read-only, verifies it and compares
// its entries with want.
func checkEntries(t *testing.T, store string, want [][]byte) {
	t.Helper()
	l, err := ledger.OpenReadOnly(store)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if cp, err := l.Verify(l.Key(), nil); err != nil || cp.Size != int64(len(want)) {
		t.Fatalf("Verify = %+v, %v", cp, err)
	}
	for i, w := range want {
		if got, err := l.VerifiedEntry(int64(i)); err != nil || !bytes.Equal(got, w) {
			t.Fatalf("entry %d: %q, %v", i, got, err)
		}
	}
}

// openVerifyErr opens the log at store read-only and verifies it under
// its own key.
func openVerifyErr(store string) error {
	l, err := ledger.OpenReadOnly(store)
	if err != nil {
		return err
	}
	defer l.Close()
	_, err = l.Verify(l.Key(), nil)
	return err
}
