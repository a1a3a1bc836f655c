package replica

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger"
)

// TestImportResume: with ImportOptions.Resume resuming a section's
// check state from its local log, the check is passed only the entries
// the export adds (every one from 0 for a section not resumed, and for a
// new log), and Stored is called once each section's entries are
// stored; a Resume that fails refuses the import, storing nothing.
func TestImportResume(t *testing.T) {
	w := newWriter(t, "example.com/resume", 1, 4)
	rep := filepath.Join(t.TempDir(), "replica")
	seen := map[string][]int64{}
	var stored []string
	opts := func(resume func(string, *ledger.Log) (bool, error)) ImportOptions {
		clear(seen)
		stored = nil
		return ImportOptions{
			Resume: resume,
			Check: func(name string) (ledger.EntryFunc, func() error) {
				return func(i int64, _ []byte, _ time.Time) error {
					seen[name] = append(seen[name], i)
					return nil
				}, func() error { return nil }
			},
			Stored: func(name string, l *ledger.Log) error {
				if cp, err := l.SignedHead(); err != nil || cp.Size != l.Size() {
					return errors.New("Stored before the checkpoint")
				}
				stored = append(stored, name)
				return nil
			},
		}
	}
	resumeAuthority := func(name string, l *ledger.Log) (bool, error) { return name == "authority", nil }
	if _, err := ImportWith(rep, w.export(t), opts(resumeAuthority)); err != nil {
		t.Fatal(err)
	}
	want := []int64{0, 1, 2, 3}
	if !slices.Equal(seen["authority"], want) || !slices.Equal(seen["decisions"], want) || !slices.Equal(stored, []string{"authority", "decisions"}) {
		t.Fatalf("a new replica: checked %v, stored %v; want every entry of both, both stored", seen, stored)
	}
	w.add(t, 3)
	failing := func(string, *ledger.Log) (bool, error) { return false, errors.New("no state") }
	if _, err := ImportWith(rep, w.export(t), opts(failing)); err == nil || !strings.Contains(err.Error(), "no state") || len(stored) != 0 {
		t.Fatalf("a failing Resume: %v, stored %v", err, stored)
	}
	verifyReplica(t, rep, 4)
	if _, err := ImportWith(rep, w.export(t), opts(resumeAuthority)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen["authority"], []int64{4, 5, 6}) || !slices.Equal(seen["decisions"], []int64{0, 1, 2, 3, 4, 5, 6}) || !slices.Equal(stored, []string{"authority", "decisions"}) {
		t.Fatalf("extending the replica: checked %v, stored %v; want the new authority entries, every decision", seen, stored)
	}
	verifyReplica(t, rep, 7)
}
