package formats

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoStorageDeps: the formats (this package) and the tiles and
// bundles (ledger/tiles) link no Badger, and this package not package
// ledger, as their package docs claim. It asks the go command for their
// transitive dependencies (without tests).
func TestNoStorageDeps(t *testing.T) {
	for _, pkg := range []string{"github.com/writ-ledger/writ/ledger/formats", "github.com/writ-ledger/writ/ledger/tiles"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 {
			t.Fatalf("go list -deps %s listed nothing", pkg)
		}
		for _, d := range deps {
			if strings.Contains(d, "dgraph-io/badger") || d == "github.com/writ-ledger/writ/ledger" {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}
