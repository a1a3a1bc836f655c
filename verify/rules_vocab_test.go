package verify_test

import (
	"testing"

	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/verify"
)

// TestRecordRulesAreNotVerdicts: a rule that only refuses records is no
// admission rule: LookupRule does not know it and --refuse refuses it.
func TestRecordRulesAreNotVerdicts(t *testing.T) {
	for _, id := range []string{rules.Threshold, rules.NotAttenuated, rules.IssuedAt, rules.Duplicate, rules.RootVersion} {
		if _, ok := verify.LookupRule(id); ok {
			t.Errorf("LookupRule(%s) found a record rule", id)
		}
		if _, err := verify.ParseRefuse([]string{id}); err == nil {
			t.Errorf("--refuse %s accepted", id)
		}
	}
	for _, r := range verify.Rules {
		if got, ok := verify.LookupRule(r.ID); !ok || got != r {
			t.Errorf("LookupRule(%s) = %v %v", r.ID, got, ok)
		}
	}
}
