package audit_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/verify/audit"
)

// TestHostileStateSigned (hostile review of issue 20): a state file whose
// signed note is not the trusted checkpoint (another size, no valid
// signature) never reaches the evidence: the note is dropped when the
// state is read, and the audit still judges by the trusted root.
func TestHostileStateSigned(t *testing.T) {
	_, b, vkey, state := forkedAfterAudit(t)
	raw, _ := os.ReadFile(state)
	var m map[string]any
	json.Unmarshal(raw, &m)
	m["authority"].(map[string]any)["signed"] = "example.com/audit\n999\nAAAA\n\n\u2014 not-verified xxxx\n"
	raw, _ = json.Marshal(m)
	os.WriteFile(state, raw, 0o600)
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
	if ev.Trusted.Signed != "" {
		t.Errorf("the state's unchecked note reached the evidence: %q", ev.Trusted.Signed)
	}
	cp, err := formats.OpenCheckpoint([]byte(ev.Found.Signed), testLogKey(t, vkey))
	if err != nil || cp.Size != 2 || !strings.HasPrefix(ev.Found.Signed, "example.com/audit\n2\n") {
		t.Errorf("found checkpoint %q does not verify under the log key: %v", ev.Found.Signed, err)
	}
}
