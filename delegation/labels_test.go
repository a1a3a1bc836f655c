package delegation_test

import (
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
)

// TestKeyLabels: a root key is named as one, a delegate by what its
// latest delegation grants, "revoked" after a revoked one; max bounds
// how many.
func TestKeyLabels(t *testing.T) {
	r1, op, rel := testkit.Key(t, 1), testkit.Key(t, 10), testkit.Key(t, 11)
	st, err := apply(t, testkit.Seal(t, testkit.Root(1, r1), r1),
		testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "team/*", "runner-*"), r1),
		testkit.Seal(t, testkit.Delegation(rel, []string{"pin"}, "", ""), r1),
		testkit.Seal(t, &schemas.Revocation{V: 1, Target: rel.Public().ID(), Reason: "left", IssuedAt: testkit.Epoch.Unix()}, r1))
	if err != nil {
		t.Fatal(err)
	}
	got := st.KeyLabels(10)
	want := map[string]string{
		r1.Public().ID():  "root key (version 1)",
		op.Public().ID():  "instruct; streams team/*; machines runner-* (delegation at index 1)",
		rel.Public().ID(): "pin; artifacts agent (delegation at index 2), revoked",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("label of %s = %q, want %q", k[:8], got[k], w)
		}
	}
	if n := len(st.KeyLabels(2)); n != 2 {
		t.Errorf("KeyLabels(2) labels %d keys", n)
	}
}

// TestChainedKeys: a delegation's digest reaches its delegate and every
// delegate below it, not a sibling.
func TestChainedKeys(t *testing.T) {
	r1, lead, op, other := testkit.Key(t, 1), testkit.Key(t, 20), testkit.Key(t, 21), testkit.Key(t, 22)
	leadDel := testkit.Delegation(lead, []string{"delegate", "instruct"}, "team/*", "runner-*")
	leadDel.Depth = 1
	leadEnv := testkit.Seal(t, leadDel, r1)
	st, err := apply(t, testkit.Seal(t, testkit.Root(1, r1), r1), leadEnv,
		testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "team/a", "runner-1"), lead),
		testkit.Seal(t, testkit.Delegation(other, []string{"instruct"}, "batch/*", "runner-*"), r1))
	if err != nil {
		t.Fatal(err)
	}
	got := st.ChainedKeys(schemas.SHA256Digest(leadEnv))
	if len(got) != 2 || got[0] != lead.Public().ID() || got[1] != op.Public().ID() {
		t.Errorf("ChainedKeys = %q, want the lead's and the operator's", got)
	}
	if got := st.ChainedKeys("sha256:" + strings.Repeat("0", 64)); len(got) != 0 {
		t.Errorf("an unknown digest reaches %q", got)
	}
}
