package formats

import (
	"testing"
)

// testLogKey parses a verifier key a test holds as text.
func testLogKey(t testing.TB, vkey string) *LogKey {
	t.Helper()
	k, err := ParseLogKey(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
