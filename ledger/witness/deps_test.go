package witness_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: the witness links no Badger, not package ledger, and nothing
// above it (verify, cmd), as its package doc claims. It asks the go
// command for its transitive dependencies (without tests).
func TestDeps(t *testing.T) {
	const pkg = "github.com/writ-ledger/writ/ledger/witness"
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatalf("go list -deps %s listed nothing", pkg)
	}
	for _, d := range deps {
		if strings.Contains(d, "dgraph-io/badger") || d == "github.com/writ-ledger/writ/ledger" ||
			strings.HasPrefix(d, "github.com/writ-ledger/writ/verify") || strings.HasPrefix(d, "github.com/writ-ledger/writ/cmd") ||
			strings.HasPrefix(d, "github.com/transparency-dev/tessera") {
			t.Errorf("%s depends on %s", pkg, d)
		}
	}
}
