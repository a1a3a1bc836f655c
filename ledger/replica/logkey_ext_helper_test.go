package replica_test

import (
	"testing"

	"github.com/writ-ledger/writ/ledger/formats"
)

// testLogKey parses a verifier key a test holds as text.
func testLogKey(t testing.TB, vkey string) *formats.LogKey {
	t.Helper()
	k, err := formats.ParseLogKey(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
