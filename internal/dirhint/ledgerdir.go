package dirhint

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// LedgerDir refuses, as bad input (an *exitcode.Error, exit 2) naming
// --ledger, a directory dir that holds no authority log: a path that does
// not exist, the authority log's own directory, or a file (an export is
// audited with --export, or imported with writ ledger import). The error
// wraps ledger.ErrNotALog; its one hint says what --ledger takes. A
// directory holding ledgerdir.AuthorityDir/ is nil.
func LedgerDir(dir string) error {
	fi, err := os.Stat(filepath.Join(dir, ledgerdir.AuthorityDir))
	if err == nil && fi.IsDir() {
		return nil
	}
	hint := "--ledger takes the ledger directory, the one that holds " + ledgerdir.AuthorityDir + "/ (made by writ ledger init or writ ledger import --dir DIR)"
	if filepath.Base(filepath.Clean(dir)) == ledgerdir.AuthorityDir {
		hint = "--ledger " + filepath.Dir(filepath.Clean(dir)) + ": the ledger is the directory above " + ledgerdir.AuthorityDir + "/"
	} else if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		hint = dir + " is a file, not a ledger directory; a runner's ledger is made by writ ledger import --dir DIR from an export (writ ledger export), or synced with writ ledger sync --dir DIR"
	} else if err != nil {
		hint = dir + " does not exist; " + hint
	}
	return exitcode.Input(fmt.Errorf("--ledger %s: %w: it holds no %s log", dir, ledger.ErrNotALog, ledgerdir.AuthorityDir), hint)
}
