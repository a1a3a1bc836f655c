package audit_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/verify/audit"
)

// TestAuditForkEvidence: a ledger whose authority log forked from the
// checkpoint the auditor's state trusts fails the audit with its typed
// cause (errors.As) and evidence another tool can check: both signed
// checkpoints, the trusted one from the state file, as they were read.
func TestAuditForkEvidence(t *testing.T) {
	_, b, vkey, state := forkedAfterAudit(t)
	rep, err := audit.Run(audit.Dir(b), audit.Options{StateFile: state})
	if err != nil || rep.OK || rep.Failure.Log != "authority" {
		t.Fatalf("the fork's audit: %+v %v", rep.Failure, err)
	}
	var inc *ledger.InconsistencyError
	if !errors.As(rep.Failure.Cause, &inc) {
		t.Fatalf("cause %v is not an *ledger.InconsistencyError", rep.Failure.Cause)
	}
	ev := rep.Failure.Evidence
	if ev == nil || ev.Trusted.Size != 2 || ev.Found.Size != 2 || ev.Trusted.RootHash == ev.Found.RootHash {
		t.Fatalf("evidence %+v", ev)
	}
	for side, signed := range map[string]string{"trusted": ev.Trusted.Signed, "found": ev.Found.Signed} {
		cp, err := formats.OpenCheckpoint([]byte(signed), testLogKey(t, vkey))
		if err != nil || cp.Size != 2 || !strings.HasPrefix(signed, "example.com/audit\n2\n") {
			t.Errorf("%s checkpoint %q does not verify under the log key: %v", side, signed, err)
		}
	}
}

// forkedAfterAudit makes a ledger a and a fork b of it (same log key, one
// more authority record each, different), audits a with a new auditor
// state, and returns both, the log's verifier key and the state file.
func forkedAfterAudit(t *testing.T) (a, b, vkey, state string) {
	t.Helper()
	logKey := testkit.Key(t, 50)
	a = auditLedger(t, logKey, testkit.Key(t, 51), "")
	b = filepath.Join(t.TempDir(), "fork")
	if out, err := exec.Command("cp", "-r", a, b).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	root, op := testkit.Key(t, 1), testkit.Key(t, 10)
	for dir, stream := range map[string]string{a: "team/a", b: "team/b"} {
		l := openAuthority(t, filepath.Join(dir, ledgerdir.AuthorityDir), logKey, nil)
		vkey = l.VerifierKey()
		if _, err := l.Append([][]byte{testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, stream, "m"), root)}); err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
	state = filepath.Join(t.TempDir(), "auditor.json")
	if rep, err := audit.Run(audit.Dir(a), audit.Options{StateFile: state}); err != nil || !rep.OK {
		t.Fatalf("the first audit: %+v %v", rep.Failure, err)
	}
	return a, b, vkey, state
}
