package dirhint

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

func TestLedgerDir(t *testing.T) {
	root := t.TempDir()
	good := filepath.Join(root, "L")
	if err := os.MkdirAll(filepath.Join(good, ledgerdir.AuthorityDir), 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "export.bin")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(root, "none")
	for _, tc := range []struct {
		name, dir, hint string // hint "": no error
	}{
		{"a ledger directory", good, ""},
		{"the authority log's own directory", filepath.Join(good, ledgerdir.AuthorityDir),
			"--ledger " + good + ": the ledger is the directory above " + ledgerdir.AuthorityDir + "/"},
		{"a file", file, file + " is a file, not a ledger directory; a runner's ledger is made by writ ledger import --dir DIR from an export (writ ledger export), or synced with writ ledger sync --dir DIR"},
		{"nothing there", missing, missing + " does not exist; --ledger takes the ledger directory, the one that holds " + ledgerdir.AuthorityDir + "/ (made by writ ledger init or writ ledger import --dir DIR)"},
		{"a directory without the log", root, "--ledger takes the ledger directory, the one that holds " + ledgerdir.AuthorityDir + "/ (made by writ ledger init or writ ledger import --dir DIR)"},
	} {
		err := LedgerDir(tc.dir)
		if tc.hint == "" {
			if err != nil {
				t.Errorf("%s: %v, want nil", tc.name, err)
			}
			continue
		}
		var ee *exitcode.Error
		if !errors.As(err, &ee) || ee.Code != exitcode.Usage || !errors.Is(err, ledger.ErrNotALog) {
			t.Fatalf("%s: %v, want exit 2 wrapping ledger.ErrNotALog", tc.name, err)
		}
		if want := "--ledger " + tc.dir + ": " + ledger.ErrNotALog.Error() + ": it holds no " + ledgerdir.AuthorityDir + " log"; ee.Err.Error() != want {
			t.Errorf("%s: %q, want %q", tc.name, ee.Err, want)
		}
		if len(ee.Hints) != 1 || ee.Hints[0] != tc.hint {
			t.Errorf("%s: hints %q, want %q", tc.name, ee.Hints, tc.hint)
		}
	}
}
