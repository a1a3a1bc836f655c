package runner_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/audit"
	"github.com/writ-ledger/writ/verify/runner"
)

// TestImportRunsAuthorityChecks: an export whose writer appended records
// past writ's gate (each kind of refusal: a rotation signed by the old
// keys alone, a back-dated act by an ended key, a stranger's signature)
// is refused by ImportLedger with the append's exact rule and the
// entry's index; nothing of it is stored, a new replica is not created,
// and a replica keeps what it held.
func TestImportRunsAuthorityChecks(t *testing.T) {
	r1, r2, op, gone := testkit.Key(t, 1), testkit.Key(t, 2), testkit.Key(t, 10), testkit.Key(t, 11)
	goneDel := testkit.Delegation(gone, []string{"quarantine"}, "demo", "runner-*")
	goneDel.NotAfter = testkit.Epoch.Add(-time.Minute).Unix()
	base := [][]byte{
		testkit.Seal(t, testkit.Root(1, r1), r1),
		testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "demo", "runner-*"), r1),
		testkit.Seal(t, goneDel, r1),
	}
	rotation := testkit.Root(1, r2)
	rotation.Version = 2
	backdated := &schemas.Quarantine{V: 1, Machine: "runner-1", IssuedAt: testkit.Epoch.Add(-time.Hour).Unix()}
	cases := []struct {
		name  string
		entry []byte
		rule  string
	}{
		{"a rotation signed by the old root alone", testkit.Seal(t, rotation, r1), delegation.RuleThreshold},
		{"an ended key's back-dated act", testkit.Seal(t, backdated, gone), delegation.RuleOutsideWindow},
		{"a stranger's instruction", testkit.Seal(t, testkit.Instruction("0123456789abcdef0123456789abcdef"), testkit.Key(t, 99)), delegation.RuleUnknownKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			auth := createAuthority(t, filepath.Join(dir, ledgerdir.AuthorityDir), "example.com/imp", testkit.Key(t, 50), nil)
			if _, err := auth.Append(base); err != nil {
				t.Fatal(err)
			}
			good := exportOf(t, auth)
			if _, err := auth.Append([][]byte{tc.entry}); err != nil { // no gate: the writer skips the checks
				t.Fatal(err)
			}
			bad := exportOf(t, auth)
			auth.Close()

			replica := filepath.Join(t.TempDir(), "replica")
			if _, err := runner.ImportLedger(replica, good, nil, ""); err != nil {
				t.Fatal(err)
			}
			fresh := filepath.Join(t.TempDir(), "new")
			for _, into := range []string{replica, fresh} {
				_, err := runner.ImportLedger(into, bad, nil, "")
				var re *delegation.RecordError
				if !errors.As(err, &re) || re.Rule != tc.rule || re.Index != 3 {
					t.Fatalf("import into %s: %v; want %s at entry 3", into, err, tc.rule)
				}
			}
			if _, err := os.Stat(fresh); !os.IsNotExist(err) {
				t.Fatalf("the refused import created %s: %v", fresh, err)
			}
			rep, err := audit.Run(audit.Dir(replica), audit.Options{})
			if err != nil || !rep.OK || rep.AuthorityEntries != 3 {
				t.Fatalf("the replica after the refused import: %v %+v", err, rep)
			}
		})
	}
}

func exportOf(t *testing.T, l *ledger.Log) string {
	t.Helper()
	var b bytes.Buffer
	if err := replica.Export(&b, []string{"authority"}, []*ledger.Log{l}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "x.export")
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNoHistoryRefused: an authority log that keeps no checkpoint
// history (one made before it existed) is refused when loaded: the time
// it accepted each record cannot be proven.
func TestNoHistoryRefused(t *testing.T) {
	r1 := testkit.Key(t, 1)
	l, err := ledger.Create(filepath.Join(t.TempDir(), "log"), "example.com/old", testkit.Key(t, 50), epochClock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Append([][]byte{testkit.Seal(t, testkit.Root(1, r1), r1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := verify.LoadAuthority(l, l.Key()); !errors.Is(err, ledger.ErrHistory) {
		t.Fatalf("LoadAuthority without history: %v; want ledger.ErrHistory", err)
	}
}
