package transfer_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/transfer"
)

// TestNewDowngrade: the version is read as ParseVersion reads it, and a
// record the reader would refuse is its field error.
func TestNewDowngrade(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	d, err := transfer.NewDowngrade("agent", "1.2.3", "rollback", now, now.Add(time.Hour))
	if err != nil || d.Version != "v1.2.3" || d.V != schemas.SchemaVersion {
		t.Fatalf("NewDowngrade = %+v, %v", d, err)
	}
	if d, err := transfer.NewDowngrade("agent", "1.2", "rollback", now, now.Add(time.Hour)); d != nil || err == nil {
		t.Errorf("version 1.2: %+v, %v", d, err)
	}
	var fe *schemas.FieldError
	if d, err := transfer.NewDowngrade("agent", "1.2.3", "", now, now.Add(time.Hour)); d != nil || !errors.As(err, &fe) {
		t.Errorf("empty reason: %+v, %v, want a *schemas.FieldError", d, err)
	}
}

// TestProvisions: sources hashed and sized, sorted by destination; a
// malformed value, an unreadable source and a repeated destination are
// refused with no list.
func TestProvisions(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("aa"), 0o644)
	os.WriteFile(b, []byte("b"), 0o644)
	got, err := transfer.Provisions([]string{b + "=.provision/z", a + "=.provision/y"})
	if err != nil || len(got) != 2 || got[0].Dest != ".provision/y" || got[0].Size != 2 || !strings.HasPrefix(got[1].Digest, "sha256:") {
		t.Fatalf("Provisions = %+v, %v", got, err)
	}
	for name, values := range map[string][]string{
		"no =":         {a},
		"empty source": {"=.provision/y"},
		"unreadable":   {filepath.Join(dir, "none") + "=.provision/y"},
		"twice":        {a + "=.provision/y", b + "=.provision/y"},
	} {
		if got, err := transfer.Provisions(values); got != nil || err == nil || !strings.HasPrefix(err.Error(), "--provision ") {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
}

// TestCompareReader: a match returns the digest, a mismatch a
// *MismatchError naming the stream.
func TestCompareReader(t *testing.T) {
	want, _, _ := transfer.DigestReader(strings.NewReader("x"), "sha256")
	if got, err := transfer.CompareReader(strings.NewReader("x"), "stdin", want); err != nil || got != want {
		t.Fatalf("match: %s, %v", got, err)
	}
	var mm *transfer.MismatchError
	if _, err := transfer.CompareReader(strings.NewReader("y"), "stdin", want); !errors.As(err, &mm) || mm.Path != "stdin" {
		t.Errorf("mismatch: %v", err)
	}
	if _, err := transfer.CompareReader(strings.NewReader("x"), "stdin", "sha1:00"); err == nil {
		t.Error("malformed expected digest accepted")
	}
	b, _ := json.Marshal(transfer.Comparison{Match: true, Expected: want, Actual: want})
	if wantJSON := `{"match":true,"expected":"` + want + `","actual":"` + want + `"}`; string(b) != wantJSON {
		t.Errorf("Comparison JSON = %s, want %s", b, wantJSON)
	}
}
