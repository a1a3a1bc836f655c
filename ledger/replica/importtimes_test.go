package replica

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/verify"
)

// TestImportJudgesWhatItStores (found in review): an export rewritten
// between the import's two passes swaps a batch's history checkpoint for
// a refresh of the same tree, a month later: the instruction is checked
// at its batch's time (inside its delegation's window) and would be
// stored with the refresh's (outside it); the tree, and so the root
// check, is the same. The copying pass compares the section's bytes with
// the verifying pass's (ExportReader.SectionDigest) and keeps nothing;
// the same swapped export given from the start is refused by the checks.
// (verify/runner.ImportLedger's Stored also judges the entries again as
// stored, verify.LoadAuthority.)
func TestImportJudgesWhatItStores(t *testing.T) {
	dir := t.TempDir()
	clock := testkit.Epoch
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	auth, err := ledger.CreateWithHistory(filepath.Join(dir, ledgerdir.AuthorityDir), "example.com/imp", testkit.Key(t, 9), now)
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	root, op := testkit.Key(t, 1), testkit.Key(t, 2)
	if _, err := auth.Append([][]byte{testkit.Seal(t, testkit.Root(1, root), root),
		testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "demo", "runner-1"), root)}); err != nil {
		t.Fatal(err)
	}
	advance(time.Minute)
	if _, err := auth.Append([][]byte{testkit.Seal(t, testkit.Instruction("0123456789abcdef0123456789abcdef"), op)}); err != nil {
		t.Fatal(err)
	}
	batch, _ := auth.HistoryCheckpoint(3)
	advance(30 * 24 * time.Hour)
	if err := auth.Refresh(); err != nil {
		t.Fatal(err)
	}
	refresh, _ := auth.Checkpoint()
	var b bytes.Buffer
	if err := Export(&b, []string{"authority"}, []*ledger.Log{auth}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ledger.export")
	os.WriteFile(path, b.Bytes(), 0o600)
	evil := bytes.Replace(b.Bytes(), batch, refresh, 1)
	if bytes.Equal(evil, b.Bytes()) || len(batch) != len(refresh) {
		t.Fatal("no swap")
	}
	testHookBetweenPasses = func() { os.WriteFile(path, evil, 0o600) }
	defer func() { testHookBetweenPasses = nil }()

	// The checks as verify/runner.ImportLedger makes them: a fresh state
	// for the first pass, and, once stored, the log's state extended from
	// what was stored (importChecks.stored).
	st := delegation.NewState()
	var refusal error
	check := func(name string) (ledger.EntryFunc, func() error) {
		return func(i int64, e []byte, at time.Time) error {
			_, err := st.Apply(bytes.Clone(e), at)
			if err != nil && refusal == nil {
				refusal = err
			}
			return err
		}, func() error { return refusal }
	}
	stored := func(name string, l *ledger.Log) error {
		_, err := verify.LoadAuthority(l, nil)
		return err
	}
	replica := filepath.Join(t.TempDir(), "replica")
	_, ierr := ImportWith(replica, path, ImportOptions{Check: check, Stored: stored})
	if !errors.Is(ierr, ErrExport) || !strings.Contains(ierr.Error(), "differ between the verifying and the copying pass") {
		t.Fatalf("import of an export rewritten between its passes: %v, want ErrExport saying the passes differ", ierr)
	}
	if l, err := ledger.OpenReadOnly(filepath.Join(replica, ledgerdir.AuthorityDir)); err == nil {
		if n := l.Size(); n != 0 {
			t.Errorf("the refused import stored %d entries", n)
		}
		l.Close()
	}
	testHookBetweenPasses = nil
	st, refusal = delegation.NewState(), nil
	os.WriteFile(path, evil, 0o600)
	_, ierr = ImportWith(filepath.Join(t.TempDir(), "replica2"), path, ImportOptions{Check: check, Stored: stored})
	var re *delegation.RecordError
	if !errors.As(ierr, &re) || re.Index != 2 {
		t.Fatalf("import of the swapped export: %v, want entry 2 refused (checked at the refresh's time)", ierr)
	}
}
