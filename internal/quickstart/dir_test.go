package quickstart

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/exitcode"
)

func TestPrepareDir(t *testing.T) {
	base := t.TempDir()
	full := filepath.Join(base, "full")
	if err := os.MkdirAll(filepath.Join(full, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, err string
	}{
		{"new", filepath.Join(base, "a", "b"), ""},
		{"empty", t.TempDir(), ""},
		{"not empty", full, "--dir " + full + ": directory is not empty"},
		{"a file", file, "mkdir " + file + ": not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PrepareDir(tc.dir)
			if tc.err != "" {
				var xe *exitcode.Error
				if !errors.As(err, &xe) || xe.Code != exitcode.Usage || err.Error() != tc.err {
					t.Errorf("PrepareDir: %v, want exit 2 %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.dir {
				t.Fatalf("PrepareDir: %q, %v", got, err)
			}
			if fi, err := os.Stat(got); err != nil || fi.Mode().Perm() != 0o700 && tc.name == "new" {
				t.Errorf("the directory: %v, %v", fi, err)
			}
		})
	}
	tmp, err := PrepareDir("")
	if err != nil || !strings.HasPrefix(filepath.Base(tmp), "writ-quickstart-") {
		t.Errorf("PrepareDir(\"\"): %q, %v", tmp, err)
	}
	os.RemoveAll(tmp)
}
