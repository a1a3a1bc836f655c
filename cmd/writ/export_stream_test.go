package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/replica"
)

// TestExportStreams: `writ ledger export` streams its output, which is
// byte for byte the export replica.ExportDir writes into a buffer, to a
// new file or to stdout, and an export that fails leaves no file (nor a
// temporary one) behind.
func TestExportStreams(t *testing.T) {
	t.Setenv("WRIT_PASSPHRASE", "pw")
	work := t.TempDir()
	t.Chdir(work)
	dir, export := adviceLedger(t)
	var want bytes.Buffer
	if _, err := replica.ExportDir(&want, ledgerdir.Dir(dir), false, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(export); err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the exported file (%d bytes, %v) is not the buffered export (%d bytes)", len(got), err, want.Len())
	}
	code, out, errb := writRun("ledger", "export", "--dir", dir, "--out", "-")
	if code != exitcode.OK || !bytes.Equal(out, want.Bytes()) {
		t.Fatalf("--out -: exit %d, %d bytes, want %d\n%s", code, len(out), want.Len(), errb)
	}
	code, out, errb = writRun("ledger", "export", "--dir", dir, "--out", "again.export", "--authority-only")
	if code != exitcode.OK || !bytes.Contains(out, []byte("again.export")) {
		t.Fatalf("--authority-only: exit %d\n%s%s", code, out, errb)
	}

	failed := filepath.Join(work, "failed.export")
	if code, _, errb = writRun("ledger", "export", "--dir", filepath.Join(work, "none"), "--out", failed); code == exitcode.OK {
		t.Fatalf("an export of no ledger succeeded\n%s", errb)
	}
	if _, err := os.Lstat(failed); !os.IsNotExist(err) {
		t.Errorf("a failed export left %s (%v)", failed, err)
	}
	if left, _ := filepath.Glob(filepath.Join(work, ".writ-out-*")); len(left) != 0 {
		t.Errorf("a failed export left temporary files %v", left)
	}
}
