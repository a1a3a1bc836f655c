package replica

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/ledger/formats"
)

// TestImportedLogJSON: an imported log prints its name as log and the
// checkpoint's root hash in hex.
func TestImportedLogJSON(t *testing.T) {
	b, err := json.Marshal(ImportedLog{Name: "authority", Origin: "o", Before: 1, After: 3, Checkpoint: formats.Checkpoint{Hash: [32]byte{0xab}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"log":"authority","origin":"o","before":1,"after":3,"recovered":0,"root_hash":"ab` + strings.Repeat("0", 62) + `"}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
}
