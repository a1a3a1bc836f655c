package replica

import (
	"bytes"
	"os"
	"path/filepath"
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
// at its batch's time (inside its delegation's window) and stored with
// the refresh's (outside it). The import must not leave a persisted
// state that accepts it: verify/runner.ImportLedger's Stored judges the
// entries again as stored (verify.LoadAuthority), which refuses them,
// and so does every act's load afterwards.
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
	l, err := ledger.Open(filepath.Join(replica, ledgerdir.AuthorityDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	full := delegation.NewState()
	_, ferr := l.Verify(l.Key(), func(i int64, e []byte, at time.Time) error {
		_, err := full.Apply(bytes.Clone(e), at)
		return err
	})
	if ferr == nil {
		t.Fatal("the swapped history no longer makes the stored log one a full replay refuses: the test proves nothing")
	}
	if ierr == nil {
		t.Errorf("the import accepted a log whose full replay refuses it: %v", ferr)
	}
	if a, lerr := verify.LoadAuthority(l, nil); lerr == nil {
		t.Errorf("an act's load accepts the imported log (replayed %q); its full replay refuses it: %v", a.Replayed, ferr)
	}
}
