package delegation_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// chain applies entries and asserts the last one's outcome: rule "" means
// accepted, anything else the exact refusal rule.
func chain(t *testing.T, rule string, entries ...[]byte) *delegation.State {
	t.Helper()
	return chainTimed(t, rule, testkit.Epoch, entries...)
}

// chainTimed is chain with the last entry accepted at last.
func chainTimed(t *testing.T, rule string, last time.Time, entries ...[]byte) *delegation.State {
	t.Helper()
	st, err := applyTimed(t, last, entries...)
	if rule == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return st
	}
	var re *delegation.RecordError
	if !errors.As(err, &re) || re.Rule != rule {
		t.Fatalf("Apply = %v, want rule %s", err, rule)
	}
	return st
}

func rootV(version, th uint64, keys ...*sign.PrivateKey) *schemas.Root {
	r := testkit.Root(th, keys...)
	r.Version = version
	r.IssuedAt += int64(version) - 10 // distinct content per version, in version order, issued before the acts they sign
	return r
}

// TestRootRotation: root v+1 needs root v's threshold of root v's keys and
// its own threshold of its own keys, and exactly version v+1.
func TestRootRotation(t *testing.T) {
	o1, o2, o3 := testkit.Key(t, 1), testkit.Key(t, 2), testkit.Key(t, 3)
	n1, n2, n3 := testkit.Key(t, 4), testkit.Key(t, 5), testkit.Key(t, 6)
	genesis := testkit.Seal(t, rootV(1, 2, o1, o2, o3), o1, o2)
	v2 := rootV(2, 2, n1, n2, n3)
	tests := []struct {
		name   string
		signed []*sign.PrivateKey
		root   *schemas.Root
		rule   string
	}{
		{"signed by the old keys only", []*sign.PrivateKey{o1, o2}, v2, delegation.RuleThreshold},
		{"signed by the new keys only", []*sign.PrivateKey{n1, n2}, v2, delegation.RuleThreshold},
		{"one old key and two new", []*sign.PrivateKey{o1, n1, n2}, v2, delegation.RuleThreshold},
		{"two old and two new", []*sign.PrivateKey{o1, o3, n2, n3}, v2, ""},
		{"a version skip", []*sign.PrivateKey{o1, o2, n1, n2}, rootV(3, 2, n1, n2, n3), delegation.RuleRootVersion},
		{"the same version again", []*sign.PrivateKey{o1, o2, n1, n2}, rootV(1, 2, n1, n2, n3), delegation.RuleRootVersion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := chain(t, tc.rule, genesis, testkit.Seal(t, tc.root, tc.signed...))
			if tc.rule == "" && st.Root().Record.Version != 2 {
				t.Fatalf("root in force is version %d", st.Root().Record.Version)
			}
		})
	}
	// After rotation the old keys no longer act as the root: a root act
	// they sign is refused for authority (not as malformed), naming the
	// rotation, whether one or the old threshold of them signs.
	op := testkit.Key(t, 10)
	del := testkit.Delegation(op, []string{"instruct"}, "demo", "runner-*")
	rotated := testkit.Seal(t, v2, o1, o2, n1, n2)
	for _, signers := range [][]*sign.PrivateKey{{o1}, {o1, o2}, {o1, n1}} {
		_, err := apply(t, genesis, rotated, testkit.Seal(t, del, signers...))
		var re *delegation.RecordError
		if !errors.As(err, &re) || re.Rule != delegation.RuleThreshold ||
			!strings.Contains(err.Error(), "of an earlier root") || !strings.Contains(err.Error(), "which root version 2 (ledger index 1) replaced") {
			t.Errorf("delegation signed by %d keys after the rotation: %v; want %s naming the rotation", len(signers), err, delegation.RuleThreshold)
		}
	}
	chain(t, "", genesis, rotated, testkit.Seal(t, del, n1, n3))
}

// TestRevokedRootKey: a key of the root in force cannot be revoked (rule
// root-key: rotate the root instead), so a revoked key never counts
// toward a root threshold; a rotation that lists a revoked key is refused;
// a key an earlier root held may be revoked once a rotation retired it.
func TestRevokedRootKey(t *testing.T) {
	r1, r2, r3 := testkit.Key(t, 1), testkit.Key(t, 2), testkit.Key(t, 3)
	n1, n2 := testkit.Key(t, 4), testkit.Key(t, 5)
	op := testkit.Key(t, 10)
	genesis := testkit.Seal(t, rootV(1, 2, r1, r2, r3), r1, r2)
	revoke := func(target string, signers ...*sign.PrivateKey) []byte {
		return testkit.Seal(t, &schemas.Revocation{V: 1, Target: target, Reason: "compromised", IssuedAt: testkit.Epoch.Add(-time.Minute).Unix()}, signers...)
	}
	// Revoking a current root key is refused, by any signers.
	chain(t, delegation.RuleRootKey, genesis, revoke(r3.Public().ID(), r1, r2))
	chain(t, delegation.RuleRootKey, genesis, revoke(r3.Public().ID(), r1, r2, r3))
	// So the key keeps its place until a rotation replaces it ...
	del := testkit.Delegation(op, []string{"instruct"}, "demo", "runner-*")
	chain(t, "", genesis, testkit.Seal(t, del, r1, r3))
	// ... which then retires it; a retired root key may be revoked ...
	v2 := rootV(2, 2, r1, r2, n1)
	rotated := testkit.Seal(t, v2, r1, r2, n1)
	chain(t, "", genesis, rotated, revoke(r3.Public().ID(), r1, r2))
	// ... and a later root that lists a revoked key is refused.
	v3 := rootV(3, 2, r1, r3, n2)
	chain(t, delegation.RuleRevoked, genesis, rotated, revoke(r3.Public().ID(), r1, r2), testkit.Seal(t, v3, r1, n1, r3, n2))
	// A delegate's key that a rotation then lists is refused the same way.
	v2op := rootV(2, 2, r1, r2, op)
	opDel := testkit.Seal(t, del, r1, r2)
	chain(t, delegation.RuleRevoked, genesis, opDel, revoke(op.Public().ID(), r1, r2), testkit.Seal(t, v2op, r1, r2, op))
}

// TestRootExpiry: an expired root trusts nothing, and at expires == now it
// already is expired.
func TestRootExpiry(t *testing.T) {
	r1, op := testkit.Key(t, 1), testkit.Key(t, 10)
	root := testkit.Root(1, r1)
	root.Expires = testkit.Epoch.Unix()
	del := testkit.Delegation(op, []string{"instruct"}, "demo", "runner-*")
	st := chainTimed(t, "", testkit.Epoch.Add(-time.Minute), testkit.Seal(t, root, r1), testkit.Seal(t, del, r1))
	for _, at := range []time.Time{testkit.Epoch, testkit.Epoch.Add(time.Hour)} {
		_, err := st.Authorize(delegation.Request{Key: op.Public(), Action: "instruct", Stream: "demo", Machine: "runner-1", At: at})
		var d *delegation.Denial
		if !errors.As(err, &d) || d.Rule != delegation.RuleRootExpired {
			t.Fatalf("at %v: %v", at, err)
		}
	}
	if _, err := st.Authorize(delegation.Request{Key: op.Public(), Action: "instruct", Stream: "demo", Machine: "runner-1", At: testkit.Epoch.Add(-time.Second)}); err != nil {
		t.Fatalf("one second before expiry: %v", err)
	}
}

// TestRotationRootRules: a rotated root listing one key twice (to reach a
// threshold), with threshold 0, or with a threshold above its key count,
// is refused as malformed when read, whoever signed it.
func TestRotationRootRules(t *testing.T) {
	o1, o2 := testkit.Key(t, 1), testkit.Key(t, 2)
	n1 := testkit.Key(t, 4)
	genesis := testkit.Seal(t, rootV(1, 1, o1, o2), o1)
	raw := func(edit func(*schemas.Root)) []byte {
		r := rootV(2, 1, n1)
		edit(r)
		payload, err := schemas.Marshal(r) // no field rules: a hostile writer
		if err != nil {
			t.Fatal(err)
		}
		env, err := sign.Sign(schemas.KindRoot, payload, o1, n1)
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	for name, edit := range map[string]func(*schemas.Root){
		"one key listed twice": func(r *schemas.Root) { r.Keys = [][]byte{n1.Public().Raw(), n1.Public().Raw()}; r.Threshold = 2 },
		"threshold 0":          func(r *schemas.Root) { r.Threshold = 0 },
		"threshold above n":    func(r *schemas.Root) { r.Threshold = 2 },
	} {
		t.Run(name, func(t *testing.T) { chain(t, delegation.RuleMalformed, genesis, raw(edit)) })
	}
}

// TestRootKeyAlsoDelegate: a key that is (or was) a root key and also
// holds a delegation acts as that delegate when it signs alone: after a
// rotation retired it, and while it is one key of a 2-of-2 root.
func TestRootKeyAlsoDelegate(t *testing.T) {
	r1, r2, r3 := testkit.Key(t, 1), testkit.Key(t, 2), testkit.Key(t, 3)
	genesis := testkit.Seal(t, rootV(1, 1, r1), r1)
	del := testkit.Delegation(r1, []string{"quarantine"}, "", "")
	del.Machines = []string{"runner-*"}
	q := testkit.Seal(t, &schemas.Quarantine{V: 1, Machine: "runner-1", IssuedAt: testkit.Epoch.Unix()}, r1)
	// Retired by a rotation to r2: its quarantine is the delegate's.
	rotated := testkit.Seal(t, rootV(2, 1, r2), r1, r2)
	chain(t, "", genesis, rotated, testkit.Seal(t, del, r2), q)
	// Without the delegation it is refused, naming the rotation.
	chain(t, delegation.RuleThreshold, genesis, rotated, q)
	// One key of a 2-of-2 root that also holds the delegation.
	two := testkit.Seal(t, rootV(1, 2, r1, r3), r1, r3)
	chain(t, "", two, testkit.Seal(t, del, r1, r3), q)
}
