package admitview

import (
	"strings"
	"testing"

	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/verify"
)

func response(index *int64) *admission.Response {
	v := &verify.Verdict{Verdict: verify.Refused, Rule: rules.Revoked, Class: "authority", Reason: "key revoked\nat 3",
		NextAct: "ask for a new delegation", Mode: verify.ModeEnforce, Signer: "ab12",
		Failed: []verify.Finding{{Rule: rules.Revoked, Reason: "key revoked"}}}
	res := admission.NewResponse(v, 0)
	res.DecisionIndex = index
	return res
}

func TestLines(t *testing.T) {
	seven := int64(7)
	for _, tc := range []struct {
		name  string
		index *int64
		last  string
	}{
		{"recorded", &seven, "mode: enforce  instruction: none  signer: ab12  decision: 7"},
		{"not recorded", nil, "mode: enforce  instruction: none  signer: ab12  decision: <nil>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := []string{
				"verdict: refused",
				"rule: revoked (authority)",
				"reason: key revoked at 3",
				"next act: ask for a new delegation",
				tc.last,
			}
			if got := Lines(response(tc.index)); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("Lines:\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	seven := int64(7)
	res := response(&seven)
	decision, err := JSON(res, false)
	if err != nil {
		t.Fatal(err)
	}
	// The decision: keys sorted, nested objects in their type's order, no
	// field of the server's answer.
	if !strings.HasPrefix(string(decision), `{"class":"authority","compared":[],"decision_index":7,"failed":[{"rule":"revoked","reason":"key revoked"}],`) ||
		strings.Contains(string(decision), `"run"`) {
		t.Errorf("JSON(decision) = %s", decision)
	}
	served, err := JSON(res, true)
	if err != nil {
		t.Fatal(err)
	}
	// The server's answer: keys sorted at every level, run and the timings.
	if !strings.HasPrefix(string(served), `{"class":"authority","compared":[],"decision_index":7,"failed":[{"reason":"key revoked","rule":"revoked"}],"hash_us":0,`) ||
		!strings.Contains(string(served), `"run":false`) {
		t.Errorf("JSON(served) = %s", served)
	}
}
