package repair_test

import (
	"strings"
	"testing"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/repair"
)

// TestNextAct: the act names the ledger directory (the store's parent),
// quoted for the shell, and its set-aside directory.
func TestNextAct(t *testing.T) {
	act := repair.NextAct(&ledger.StoreError{Dir: "/x/my ledger/authority"})
	if !strings.Contains(act, "writ ledger repair --dir '/x/my ledger'") || !strings.Contains(act, "/x/my ledger/set-aside/") || strings.Contains(act, "DIR") {
		t.Fatalf("%s", act)
	}
	if act := repair.NextAct(&ledger.StoreError{Dir: "/x/l/authority", Lost: true}); !strings.Contains(act, "--dir /x/l --from EXPORT") {
		t.Fatalf("lost: %s", act)
	}
}
