package audit

import (
	"strings"
	"testing"

	"github.com/writ-ledger/writ/schemas"
)

// TestFilterMatches: each filter kind, alone and combined; a rule
// matches the deciding rule only (as by_rule counts), not another that
// failed too.
func TestFilterMatches(t *testing.T) {
	signer := strings.Repeat("ab", 32)
	d := &schemas.Decision{Machine: "runner-7", Stream: "deploy/web", Verdict: schemas.VerdictWouldRefuse, Rule: "unknown-build",
		Failed: []string{"unknown-build", "agent-not-pinned"}, Signer: signer}
	for _, tc := range []struct {
		name string
		f    Filter
		want bool
	}{
		{"nothing", Filter{}, true},
		{"verdict", Filter{Verdicts: []string{"would-refuse"}}, true},
		{"other verdict", Filter{Verdicts: []string{"refused"}}, false},
		{"either verdict", Filter{Verdicts: []string{"refused", "would-refuse"}}, true},
		{"deciding rule", Filter{Rules: []string{"unknown-build"}}, true},
		{"failed, not deciding", Filter{Rules: []string{"agent-not-pinned"}}, false},
		{"rule not failed", Filter{Rules: []string{"unsigned"}}, false},
		{"machine pattern", Filter{Machines: []string{"runner-*"}}, true},
		{"machine pattern, other", Filter{Machines: []string{"build-*"}}, false},
		{"stream within a segment", Filter{Streams: []string{"deploy/*"}}, true},
		{"stream across segments", Filter{Streams: []string{"*"}}, false},
		{"signer prefix", Filter{Signers: []string{"abababab"}}, true},
		{"signer, other", Filter{Signers: []string{"cdcdcdcd"}}, false},
		{"unsigned only", Filter{Signers: []string{"unsigned"}}, false},
		{"two kinds narrow", Filter{Verdicts: []string{"would-refuse"}, Machines: []string{"build-*"}}, false},
	} {
		if got := tc.f.matches(d); got != tc.want {
			t.Errorf("%s: matches = %v, want %v", tc.name, got, tc.want)
		}
	}
	unsigned := &schemas.Decision{Verdict: schemas.VerdictAdmittedUnsigned, Rule: "unsigned"}
	if !(&Filter{Signers: []string{"unsigned"}}).matches(unsigned) || (&Filter{Signers: []string{"abababab"}}).matches(unsigned) {
		t.Error("an unsigned decision: --signer unsigned must match it, a key prefix must not")
	}
}

// TestFilterCheck: each refusal names the field and the rule.
func TestFilterCheck(t *testing.T) {
	for _, tc := range []struct {
		f    Filter
		want string
	}{
		{Filter{Limit: 1}, ""},
		{Filter{Limit: 0}, "limit 0: from 1 to 100000"},
		{Filter{Limit: MaxList + 1}, "limit 100001"},
		{Filter{Limit: 1, Verdicts: []string{"Admitted"}}, `verdict "Admitted"`},
		{Filter{Limit: 1, Machines: []string{"["}}, `pattern "["`},
		{Filter{Limit: 1, Machines: []string{""}}, `pattern "": an empty pattern matches nothing`},
		{Filter{Limit: 1, Rules: []string{"unsigned"}}, ""},
		{Filter{Limit: 1, Rules: []string{"quarantine"}}, `rule "quarantine": not a rule this writ knows`}, // a new user's typo for quarantined
		{Filter{Limit: 1, Signers: []string{"ABABABAB"}}, `signer "ABABABAB"`},
		{Filter{Limit: 1, Signers: []string{"abab"}}, `signer "abab"`},
	} {
		err := tc.f.Check()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: error %v, want %q", tc.f, err, tc.want)
		}
	}
}
