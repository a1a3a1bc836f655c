package ledger_test

import (
	"testing"

	"github.com/writ-ledger/writ/ledger"
)

// FuzzParseCheckpoint: an accepted checkpoint body re-serializes to
// exactly the input; nothing panics.
func FuzzParseCheckpoint(f *testing.F) {
	f.Add("example.com/log\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n")
	f.Add("example.com/log\n03\nAAAA\nx\n")
	f.Fuzz(func(t *testing.T, body string) {
		c, err := ledger.ParseCheckpoint(body)
		if err != nil {
			return
		}
		if c.Body() != body {
			t.Fatalf("accepted a non-canonical body %q (canonical %q)", body, c.Body())
		}
	})
}
