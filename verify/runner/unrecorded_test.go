package runner

import (
	"testing"

	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/verify"
)

// TestNotRecordedIsRefused: a verdict whose decision was not recorded is
// reported as a refusal, never as admitted, and the original verdict is
// left as it was.
func TestNotRecordedIsRefused(t *testing.T) {
	v := &verify.Verdict{Verdict: verify.Admitted, Rule: rules.OK, Mode: verify.ModeOff, Machine: "runner-1"}
	if n := notRecorded(v); n.Verdict != verify.Refused || n.Rule != rules.Internal || v.Verdict != verify.Admitted {
		t.Fatalf("notRecorded: %s/%s (the original must stay %s)", n.Verdict, n.Rule, v.Verdict)
	}
}
