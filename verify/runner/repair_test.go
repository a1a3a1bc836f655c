package runner_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/verify/runner"
)

// TestRepairLedgerTrust: a whole ledger is kept as it is; a first root
// other than TrustRoot ends the repair with a trust error before anything
// changes; an export to restore from is refused when no log is damaged.
func TestRepairLedgerTrust(t *testing.T) {
	dir := t.TempDir()
	r1 := testkit.Key(t, 1)
	auth := createAuthority(t, filepath.Join(dir, ledgerdir.AuthorityDir), "example.com/rep", testkit.Key(t, 50), nil)
	if _, err := auth.Append([][]byte{testkit.Seal(t, testkit.Root(1, r1), r1)}); err != nil {
		t.Fatal(err)
	}
	export := exportOf(t, auth)
	auth.Close()
	res, err := runner.RepairLedger(dir, runner.RepairOptions{})
	if err != nil || len(res.Logs) != 1 || res.Logs[0].Action != "whole" || res.SetAside != "" {
		t.Fatalf("a whole ledger: %+v %v", res, err)
	}
	wrong := "sha256:" + "00000000000000000000000000000000000000000000000000000000000000ff"
	if _, err := runner.RepairLedger(dir, runner.RepairOptions{TrustRoot: wrong}); !errors.Is(err, ledger.ErrTrust) {
		t.Fatalf("another first root: %v", err)
	}
	if _, err := runner.RepairLedger(dir, runner.RepairOptions{From: export}); err == nil {
		t.Fatal("restored a ledger with no damaged log")
	}
}
