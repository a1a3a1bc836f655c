package replica

import (
	"testing"

	"github.com/writ-ledger/writ/ledger/formats"
)

func TestResultText(t *testing.T) {
	var cp formats.Checkpoint
	cp.Hash[0] = 0xab
	root := "ab00000000000000000000000000000000000000000000000000000000000000"
	for _, tc := range []struct {
		got, want string
	}{
		{ImportedLog{Name: "authority", Origin: "o", Before: 2, After: 5, Checkpoint: cp}.Text(),
			"imported authority log o: 2 → 5 entries, root " + root},
		{ImportedLog{Name: "decisions", Origin: "d", After: 1, Recovered: 3, Checkpoint: cp}.Text(),
			"imported decisions log d: 0 → 1 entries, root " + root + " (first dropped 3 unsigned entries an interrupted import left)"},
		{(&ExportedDir{Logs: []string{"authority", "decisions"}, Sizes: []int64{4, 0}, Bytes: 99}).Text("x.export"),
			"exported authority 4, decisions 0 to x.export (99 bytes)"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
