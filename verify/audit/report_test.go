package audit_test

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/audit"
)

// auditLedger writes a ledger directory: an authority log signed by
// logKey holding a root record, and a decision log signed by runnerKey,
// named as the runner names it, holding one decision that trusted the
// authority log's checkpoint.
func auditLedger(t *testing.T, logKey, runnerKey *sign.PrivateKey, decisionOrigin string) string {
	t.Helper()
	dir := t.TempDir()
	root := testkit.Key(t, 1)
	auth := createAuthority(t, filepath.Join(dir, ledgerdir.AuthorityDir), "example.com/audit", logKey, nil)
	defer auth.Close()
	if _, err := auth.Append([][]byte{testkit.Seal(t, testkit.Root(1, root), root)}); err != nil {
		t.Fatal(err)
	}
	head, err := auth.SignedHead()
	if err != nil {
		t.Fatal(err)
	}
	if decisionOrigin == "" {
		decisionOrigin = "example.com/audit/decisions/" + runnerKey.Public().ID()[:16]
	}
	dec, err := ledger.Create(filepath.Join(dir, ledgerdir.DecisionsDir), decisionOrigin, runnerKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	v := verify.RefuseLedger(verify.Config{Machine: "m", Mode: verify.ModeOff, Now: func() time.Time { return testkit.Epoch }},
		verify.Dispatch{Raw: []byte("x")}, rules.LedgerUnverified, os.ErrInvalid)
	v.AuthoritySize, v.AuthorityRoot = head.Size, hexOf(head.Hash[:])
	b, err := schemas.Encode(verify.Decision(v))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dec.Append([][]byte{b}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAuditPinsKeysAndBindsLogs: the auditor's state remembers the keys
// the logs verified under, so the same logs re-signed under other keys
// fail; a decision log must be named after its authority log and its key.
func TestAuditPinsKeysAndBindsLogs(t *testing.T) {
	state := filepath.Join(t.TempDir(), "auditor.json")
	good := auditLedger(t, testkit.Key(t, 50), testkit.Key(t, 51), "")
	if rep, err := audit.Run(audit.Dir(good), audit.Options{StateFile: state}); err != nil || !rep.OK || rep.Decisions != 1 {
		t.Fatalf("first audit: %+v, %v", rep.Failure, err)
	}
	b, _ := os.ReadFile(state)
	if !strings.Contains(string(b), `"authority_vkey": "example.com/audit+`) || !strings.Contains(string(b), `"decisions_vkey"`) {
		t.Fatalf("state file does not remember the keys:\n%s", b)
	}
	for _, tc := range []struct {
		name, dir, log, want string
	}{
		{"authority log re-signed under another key", auditLedger(t, testkit.Key(t, 60), testkit.Key(t, 51), ""), "authority", "rule vkey-mismatch"},
		{"decision log re-signed under another key, origin kept", auditLedger(t, testkit.Key(t, 50), testkit.Key(t, 61),
			"example.com/audit/decisions/"+testkit.Key(t, 51).Public().ID()[:16]), "decisions", "rule vkey-mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := audit.Run(audit.Dir(tc.dir), audit.Options{StateFile: state})
			if err != nil || rep.OK || rep.Failure.Log != tc.log || !strings.Contains(rep.Failure.Error, tc.want) || rep.Failure.Rule != rules.VKeyMismatch {
				t.Fatalf("audit: %+v, %v", rep.Failure, err)
			}
		})
	}
	// Without a state file, a decision log named after another key or
	// another authority log is refused too.
	for _, origin := range []string{"example.com/audit/decisions/" + testkit.Key(t, 51).Public().ID()[:16], "example.com/other/decisions/" + testkit.Key(t, 61).Public().ID()[:16]} {
		rep, err := audit.Run(audit.Dir(auditLedger(t, testkit.Key(t, 50), testkit.Key(t, 61), origin)), audit.Options{})
		if err != nil || rep.OK || !strings.Contains(rep.Failure.Error, "decision log origin") {
			t.Fatalf("origin %s: %+v, %v", origin, rep.Failure, err)
		}
	}
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }
