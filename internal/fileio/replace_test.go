package fileio

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReplace: the new bytes replace the old, and no temporary file is
// left beside them; a directory that does not exist is an error, with
// nothing written.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	for _, data := range []string{"one\n", "two\n"} {
		if err := Replace(p, ".writ-test-", []byte(data)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != data {
			t.Fatalf("read %q, want %q", got, data)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want only the state", len(entries))
	}
	if err := Replace(filepath.Join(dir, "missing", "s"), ".writ-test-", []byte("x")); err == nil {
		t.Error("Replace into a missing directory succeeded")
	}
}
