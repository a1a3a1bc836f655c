package delegation_test

import (
	"errors"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// world is a root r1 and a lead holding instruct, delegate and revoke on
// team/* for runner-*, depth 2, valid a day either side of Epoch.
type world struct {
	t                   *testing.T
	r1, lead, op, other *sign.PrivateKey
	genesis, leadDel    []byte
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, r1: testkit.Key(t, 1), lead: testkit.Key(t, 20), op: testkit.Key(t, 21), other: testkit.Key(t, 22)}
	w.genesis = testkit.Seal(t, testkit.Root(1, w.r1), w.r1)
	d := testkit.Delegation(w.lead, []string{"delegate", "instruct", "revoke"}, "team/*", "runner-*")
	d.Depth = 2
	w.leadDel = testkit.Seal(t, d, w.r1)
	return w
}

// sub is a delegation from the lead to op, narrowed by edit.
func (w *world) sub(edit func(*schemas.Delegation)) *schemas.Delegation {
	d := testkit.Delegation(w.op, []string{"instruct"}, "team/a", "runner-1")
	d.NotBefore, d.NotAfter = testkit.Epoch.Add(-time.Hour).Unix(), testkit.Epoch.Add(time.Hour).Unix()
	if edit != nil {
		edit(d)
	}
	return d
}

func (w *world) instr(stream string, key *sign.PrivateKey) []byte {
	in := testkit.Instruction("0123456789abcdef0123456789abcdef")
	in.Stream = stream
	return testkit.Seal(w.t, in, key)
}

func TestReDelegation(t *testing.T) {
	w := newWorld(t)
	tests := []struct {
		name string
		edit func(*schemas.Delegation)
		rule string
	}{
		{"a strict narrowing", nil, ""},
		{"widening the actions", func(d *schemas.Delegation) {
			d.Actions = []schemas.Action{"instruct", "pin"}
			d.Artifacts = []string{"agent"}
		}, delegation.RuleNotAttenuated},
		{"widening the streams", func(d *schemas.Delegation) { d.Streams = []string{"*"} }, delegation.RuleNotAttenuated},
		{"a stream pattern crossing '/'", func(d *schemas.Delegation) { d.Streams = []string{"team/*/x"} }, delegation.RuleNotAttenuated},
		{"the same patterns", func(d *schemas.Delegation) { d.Streams = []string{"team/*"}; d.Machines = []string{"runner-*"} }, ""},
		{"widening the window", func(d *schemas.Delegation) { d.NotAfter = testkit.Epoch.Add(48 * time.Hour).Unix() }, delegation.RuleNotAttenuated},
		{"the same depth", func(d *schemas.Delegation) { d.Actions = []schemas.Action{"delegate", "instruct"}; d.Depth = 2 }, delegation.RuleNotAttenuated},
		{"signed after the parent's window ended", func(d *schemas.Delegation) { d.IssuedAt = testkit.Epoch.Add(25 * time.Hour).Unix() }, delegation.RuleOutsideWindow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sub := w.sub(tc.edit)
			chainTimed(t, tc.rule, time.Unix(sub.IssuedAt, 0), w.genesis, w.leadDel, testkit.Seal(t, sub, w.lead))
		})
	}
	t.Run("depth exhausted", func(t *testing.T) {
		mid := w.sub(func(d *schemas.Delegation) { d.Actions = []schemas.Action{"delegate", "instruct"}; d.Depth = 1 })
		leaf := testkit.Delegation(w.other, []string{"instruct"}, "team/a", "runner-1")
		leaf.NotBefore, leaf.NotAfter = mid.NotBefore, mid.NotAfter
		st := chain(t, "", w.genesis, w.leadDel, testkit.Seal(t, mid, w.lead), testkit.Seal(t, leaf, w.op))
		g, err := st.Authorize(delegation.Request{Key: w.other.Public(), Action: "instruct", Stream: "team/a", Machine: "runner-1", At: testkit.Epoch})
		if err != nil || len(g.Chain()) != 3 {
			t.Fatalf("a three-link chain: %v", err)
		}
		leaf2 := *leaf
		leaf2.Key = testkit.Key(t, 23).Public().Raw()
		leaf2.Actions, leaf2.Depth = []schemas.Action{"delegate", "instruct"}, 1
		chain(t, delegation.RuleNotAttenuated, w.genesis, w.leadDel, testkit.Seal(t, mid, w.lead), testkit.Seal(t, &leaf2, w.op))
	})
}

func authorizeRule(st *delegation.State, k *sign.PrivateKey, stream string, at time.Time) string {
	_, err := st.Authorize(delegation.Request{Key: k.Public(), Action: "instruct", Stream: stream, Machine: "runner-1", At: at})
	var d *delegation.Denial
	if errors.As(err, &d) {
		return d.Rule
	}
	return ""
}

func TestRevocation(t *testing.T) {
	w := newWorld(t)
	subEnv := testkit.Seal(t, w.sub(nil), w.lead)
	revokeKey := func(k *sign.PrivateKey, by ...*sign.PrivateKey) []byte {
		return testkit.Seal(t, &schemas.Revocation{V: 1, Target: k.Public().ID(), Reason: "lost laptop", IssuedAt: testkit.Epoch.Add(-30 * time.Minute).Unix()}, by...)
	}
	revokeRecord := func(digest string, by ...*sign.PrivateKey) []byte {
		return testkit.Seal(t, &schemas.Revocation{V: 1, Target: digest, Reason: "superseded", IssuedAt: testkit.Epoch.Add(-30 * time.Minute).Unix()}, by...)
	}
	t.Run("a key revoked before the instruction", func(t *testing.T) {
		chain(t, delegation.RuleRevoked, w.genesis, w.leadDel, subEnv, revokeKey(w.op, w.r1), w.instr("team/a", w.op))
	})
	t.Run("a key revoked after the instruction", func(t *testing.T) {
		st := chain(t, "", w.genesis, w.leadDel, subEnv, w.instr("team/a", w.op), revokeKey(w.op, w.r1))
		if rule := authorizeRule(st, w.op, "team/a", testkit.Epoch); rule != delegation.RuleRevoked {
			t.Fatalf("after the revocation: %q", rule)
		}
	})
	t.Run("a revoked delegation in the middle of a chain", func(t *testing.T) {
		st := chain(t, "", w.genesis, w.leadDel, subEnv, revokeRecord(schemas.SHA256Digest(w.leadDel), w.r1))
		if rule := authorizeRule(st, w.op, "team/a", testkit.Epoch); rule != delegation.RuleRevoked {
			t.Fatalf("the grandchild of a revoked delegation: %q", rule)
		}
	})
	t.Run("the issuer of a delegation revokes it", func(t *testing.T) {
		chain(t, "", w.genesis, w.leadDel, subEnv, revokeRecord(schemas.SHA256Digest(subEnv), w.lead))
	})
	t.Run("a revocation signed by an unrelated key", func(t *testing.T) {
		chain(t, delegation.RuleUnknownKey, w.genesis, w.leadDel, subEnv, revokeKey(w.op, w.other))
	})
	t.Run("a revocation by a delegate that did not issue the target", func(t *testing.T) {
		chain(t, delegation.RuleOutOfScope, w.genesis, w.leadDel, subEnv, revokeRecord(schemas.SHA256Digest(w.leadDel), w.lead))
	})
	t.Run("a revocation of nothing", func(t *testing.T) {
		chain(t, delegation.RuleUnknownTarget, w.genesis, w.leadDel, revokeRecord("sha256:"+string(make([]byte, 0))+"00000000000000000000000000000000000000000000000000000000000000ff", w.r1))
	})
}

func TestIssuerAndQuarantine(t *testing.T) {
	r1, r2, r3, ops := testkit.Key(t, 1), testkit.Key(t, 2), testkit.Key(t, 3), testkit.Key(t, 30)
	genesis := testkit.Seal(t, testkit.Root(2, r1, r2, r3), r1, r2)
	iss := &schemas.Issuer{V: 1, Issuer: "https://idp.example", JWKSURI: "https://idp.example/jwks.json", Audiences: []string{"writ"}, IssuedAt: testkit.Epoch.Unix() - 60}
	chain(t, delegation.RuleThreshold, genesis, testkit.Seal(t, iss, r1))
	st := chain(t, "", genesis, testkit.Seal(t, iss, r1, r3))
	if e, d := st.Issuer("https://idp.example", testkit.Epoch); e == nil || d != nil {
		t.Fatalf("issuer record not in force: %v", d)
	}
	// It stands on the root: once the root has expired, it is not in force.
	expiry := time.Unix(st.Root().Record.Expires, 0)
	if e, d := st.Issuer("https://idp.example", expiry); e != nil || d == nil || d.Rule != delegation.RuleRootExpired {
		t.Fatalf("issuer record at the root's expiry: %v, %v; want root-expired", e, d)
	}
	if e, _ := st.Issuer("https://idp.example", expiry.Add(-time.Second)); e == nil {
		t.Fatal("issuer record not in force a second before the root expires")
	}
	qd := testkit.Delegation(ops, []string{"quarantine"}, "", "")
	qd.Machines = []string{"runner-*"}
	q := &schemas.Quarantine{V: 1, Machine: "runner-7", IssuedAt: testkit.Epoch.Unix() - 60}
	st = chain(t, "", genesis, testkit.Seal(t, qd, r1, r2), testkit.Seal(t, q, ops))
	if st.Quarantine("runner-7", testkit.Epoch.Unix()) == nil || st.Quarantine("runner-8", testkit.Epoch.Unix()) != nil {
		t.Fatal("quarantine not in force for exactly runner-7")
	}
	lift := &schemas.Quarantine{V: 1, Machine: "runner-7", Lift: true, IssuedAt: testkit.Epoch.Unix()}
	st = chain(t, "", genesis, testkit.Seal(t, qd, r1, r2), testkit.Seal(t, q, ops), testkit.Seal(t, lift, ops))
	if st.Quarantine("runner-7", testkit.Epoch.Unix()) != nil {
		t.Fatal("a lifted quarantine is still in force")
	}
	chain(t, delegation.RuleOutOfScope, genesis, testkit.Seal(t, qd, r1, r2), testkit.Seal(t, &schemas.Quarantine{V: 1, Machine: "builder-1", IssuedAt: q.IssuedAt}, ops))
}
