package repair_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
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

// entries returns n distinct entries of varied lengths (as package
// ledger's tests make them).
func entries(n int) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, []byte(fmt.Sprintf("entry %d %s", i, bytes.Repeat([]byte{'x'}, i%7))))
	}
	return out
}

// copyDir copies the regular files of from into to.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(from, "*"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(to, filepath.Base(n)), b, 0o600)
	}
}
