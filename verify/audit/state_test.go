package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestReadStateLimit: a state file of exactly MaxStateFile bytes is
// read; one byte more is refused, naming the file and the limit, with no
// state; a missing file is the empty state.
func TestReadStateLimit(t *testing.T) {
	dir := t.TempDir()
	atLimit := filepath.Join(dir, "at-limit.json")
	over := filepath.Join(dir, "over.json")
	// Valid JSON padded with spaces: only the size differs.
	body := []byte(`{"authority_vkey":"k"}`)
	pad := bytes.Repeat([]byte{' '}, MaxStateFile-len(body))
	if err := os.WriteFile(atLimit, append(body, pad...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(over, append(append(body, pad...), ' '), 0o600); err != nil {
		t.Fatal(err)
	}

	st, err := readState(atLimit)
	if err != nil || st.AuthorityVKey != "k" {
		t.Fatalf("a state file of exactly %d bytes: %+v, %v", MaxStateFile, st, err)
	}
	st, err = readState(over)
	want := "auditor state " + over + ": larger than 65536 bytes, the limit for a state file: not a state an audit wrote"
	if err == nil || err.Error() != want || st != nil {
		t.Fatalf("a state file of %d bytes: %+v, %v; want the error %q", MaxStateFile+1, st, err, want)
	}
	st, err = readState(filepath.Join(dir, "missing.json"))
	if err != nil || *st != (auditState{}) {
		t.Fatalf("a missing state file: %+v, %v", st, err)
	}
}
