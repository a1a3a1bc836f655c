package verify_test

import (
	"errors"
	"testing"
	"time"

	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/verify"
)

// TestHostileRecordOnlyRule (hostile review of issue 20): a rule that only
// refuses records, or no rule at all, named in a verdict is an internal
// error, refused in every mode, and --refuse does not take it.
func TestHostileRecordOnlyRule(t *testing.T) {
	for _, rule := range []string{"threshold-not-met", "exceeds-parent", "issued-at-range", "malformed-record", "no-such-rule"} {
		for _, mode := range []verify.Mode{verify.ModeOff, verify.ModeWarn, verify.ModeEnforce} {
			v := verify.RefuseLedger(verify.Config{Machine: "m", Mode: mode, Now: time.Now}, verify.Dispatch{Raw: []byte("x")}, rule, errors.New("e"))
			if v.Verdict != verify.Refused || v.Rule != rules.Internal || v.Class != rules.ClassInternal {
				t.Errorf("%s under %s: %s %s (%s), want refused internal-error", rule, mode, v.Verdict, v.Rule, v.Class)
			}
		}
		if _, err := verify.ParseRefuse([]string{rule}); err == nil {
			t.Errorf("ParseRefuse(%s) accepted it", rule)
		}
	}
}
