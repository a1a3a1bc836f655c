package repair

import (
	"path/filepath"
	"strings"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
)

// NextAct is the next act for a refused log store: its rule's StoreAct
// (package rules), with DIR the ledger directory (the parent of an
// authority or decisions store, shell-quoted) and DIR/set-aside/ the
// directory Repair sets damaged stores aside in.
func NextAct(se *ledger.StoreError) string {
	r, _ := rules.Lookup(se.Rule())
	dir := se.Dir
	if b := filepath.Base(dir); b == ledgerdir.AuthorityDir || b == ledgerdir.DecisionsDir {
		dir = filepath.Dir(dir)
	}
	act := strings.ReplaceAll(r.StoreAct, "--dir DIR", "--dir "+humanize.ShellQuote(dir))
	return strings.ReplaceAll(act, "DIR/set-aside/", filepath.Join(dir, SetAsideDir)+"/")
}
