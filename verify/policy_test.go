package verify_test

import (
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/policy"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

func mustPolicy(t *testing.T, src string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAdmitPolicy: the admission policy (--policy-cel) runs after every
// built-in check and only refuses: a rule that matches refuses under
// policy-refused in every mode, naming the rule; one that does not
// leaves the verdict as the built-in checks made it; and a built-in
// refusal stays the verdict's rule whatever the policy says.
func TestAdmitPolicy(t *testing.T) {
	f := newFixture(t, nil, nil, nil)
	signed := testkit.Seal(t, instr(nil), f.op)
	refuseDemo := mustPolicy(t, `{"rules": [
		{"id": "policy-other", "reason": "never", "refuse": "instruction.stream == 'elsewhere'"},
		{"id": "policy-no-demo", "reason": "demo is closed", "refuse": "instruction.stream == 'demo' && agent.artifact == 'agent' && time > timestamp('2000-01-01T00:00:00Z')"}]}`)
	never := mustPolicy(t, `{"rules": [{"id": "policy-never", "reason": "never", "refuse": "machine != 'runner-1'"}]}`)
	broken := mustPolicy(t, `{"rules": [{"id": "policy-broken", "reason": "r", "refuse": "instruction.nothing == 1"}]}`)
	tests := []struct {
		name       string
		p          *policy.Policy
		raw        []byte
		agent      string
		rule, pRul string
		verdicts   [3]schemas.Verdict
	}{
		{"a rule refuses an admitted dispatch", refuseDemo, signed, f.agent, rules.PolicyRefused, "policy-no-demo", refusedAll},
		{"a rule refuses an unsigned one, in off too", refuseDemo, bare(t, instr(nil)), f.agent, rules.PolicyRefused, "policy-no-demo", refusedAll},
		{"a rule that cannot be evaluated refuses", broken, signed, f.agent, rules.PolicyRefused, "policy-broken", refusedAll},
		{"no rule refuses", never, signed, f.agent, rules.OK, "", [3]schemas.Verdict{"admitted", "admitted", "admitted"}},
		{"the policy never admits a built-in refusal", never, signed, f.otherFile, rules.AgentDigestMismatch, "", refusedAll},
		{"a built-in refusal stays the verdict's rule", refuseDemo, signed, f.otherFile, rules.AgentDigestMismatch, "policy-no-demo", refusedAll},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i, mode := range []verify.Mode{verify.ModeOff, verify.ModeWarn, verify.ModeEnforce} {
				c := cfg(mode)
				c.Policy = tc.p
				v := verify.Admit(f.st, c, verify.Dispatch{Raw: tc.raw, AgentBinary: tc.agent})
				if v.Rule != tc.rule || v.Verdict != tc.verdicts[i] || v.PolicyRule != tc.pRul {
					t.Fatalf("mode %s: %s / %s policy %q (%s), want %s / %s policy %q", mode, v.Verdict, v.Rule, v.PolicyRule, v.Reason, tc.verdicts[i], tc.rule, tc.pRul)
				}
				if v.Rule == rules.PolicyRefused && (!strings.Contains(v.Reason, tc.pRul) || v.Class != rules.ClassPolicy) {
					t.Fatalf("reason %q class %s", v.Reason, v.Class)
				}
				if err := verify.Decision(v).Validate(); err != nil {
					t.Fatalf("decision record: %v", err)
				}
				ch := verify.Check(f.st, c, verify.Dispatch{Raw: tc.raw, AgentBinary: tc.agent})
				if got := ch.Decide(nil); got.Rule != v.Rule || got.Verdict != v.Verdict {
					t.Fatalf("Check then Decide: %s / %s, Admit: %s / %s", got.Verdict, got.Rule, v.Verdict, v.Rule)
				}
			}
			if tc.rule == rules.PolicyRefused {
				assertedRule(tc.rule)
			}
		})
	}
}
