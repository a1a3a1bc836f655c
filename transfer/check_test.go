package transfer

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	sum := sha256.Sum256([]byte("hello"))
	good := "sha256:" + hex.EncodeToString(sum[:])
	other := "sha256:" + strings.Repeat("0", 64)
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, expected, stdin string
		want                        Comparison
		err                         error
	}{
		{"file match", path, good, "", Comparison{Match: true, Expected: good, Actual: good}, nil},
		{"stdin match", "-", good, "hello", Comparison{Match: true, Expected: good, Actual: good}, nil},
		{"file mismatch", path, other, "", Comparison{Expected: other, Actual: good}, ErrDigestMismatch},
		{"stdin mismatch", "-", other, "hello", Comparison{Expected: other, Actual: good}, ErrDigestMismatch},
		{"malformed", path, "sha256:xyz", "", Comparison{}, ErrDigestSyntax},
		{"no file", filepath.Join(t.TempDir(), "none"), good, "", Comparison{}, os.ErrNotExist},
	} {
		got, err := Check(strings.NewReader(tc.stdin), tc.path, tc.expected)
		if got != tc.want || (tc.err == nil) != (err == nil) || (tc.err != nil && !errors.Is(err, tc.err)) {
			t.Errorf("%s: %+v %v, want %+v %v", tc.name, got, err, tc.want, tc.err)
		}
	}
	var mm *MismatchError
	if _, err := Check(strings.NewReader("hello"), "-", other); !errors.As(err, &mm) || mm.Path != "stdin" {
		t.Errorf("a stream's mismatch names stdin: %v", err)
	}
}
