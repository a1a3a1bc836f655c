package delegation_test

import (
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// timeWorld is a root r1 and a delegate op holding every delegate-signed
// action on team/*, runner-* and agent, valid from a day before Epoch to
// windowEnd, with a pin op made at Epoch (the target of a revocation).
type timeWorld struct {
	r1, op, child *sign.PrivateKey
	base          [][]byte
	pinDigest     string
}

// windowEnd is when op's delegation ends (exclusive).
var windowEnd = testkit.Epoch.Add(24 * time.Hour)

func newTimeWorld(t *testing.T) *timeWorld {
	w := &timeWorld{r1: testkit.Key(t, 1), op: testkit.Key(t, 30), child: testkit.Key(t, 31)}
	d := testkit.Delegation(w.op, []string{"delegate", "instruct", "pin", "quarantine", "revoke"}, "team/*", "runner-*")
	d.Depth = 1
	pin := testkit.Seal(t, testkit.Pin("linux/amd64", digest, 1), w.op)
	w.base = [][]byte{testkit.Seal(t, testkit.Root(1, w.r1), w.r1), testkit.Seal(t, d, w.r1), pin}
	env, err := sign.ParseEnvelope(pin)
	if err != nil {
		t.Fatal(err)
	}
	w.pinDigest = env.Digest()
	return w
}

// act returns op's record of kind k issued at issued.
func (w *timeWorld) act(t *testing.T, k schemas.Kind, issued time.Time) []byte {
	u := issued.Unix()
	var rec schemas.Record
	switch k {
	case schemas.KindDelegation:
		d := testkit.Delegation(w.child, []string{"instruct"}, "team/a", "runner-1")
		d.IssuedAt = u
		rec = d
	case schemas.KindPin:
		p := testkit.Pin("linux/arm64", digest, 2)
		p.IssuedAt, p.Expires = u, u+3600
		rec = p
	case schemas.KindInstruction:
		in := testkit.Instruction("0123456789abcdef0123456789abcdef")
		in.Stream, in.IssuedAt, in.NotBefore, in.Expires = "team/a", u, u, u+3600
		rec = in
	case schemas.KindRevocation:
		rec = &schemas.Revocation{V: 1, Target: w.pinDigest, Reason: "test", IssuedAt: u}
	case schemas.KindQuarantine:
		rec = &schemas.Quarantine{V: 1, Machine: "runner-1", IssuedAt: u}
	}
	return testkit.Seal(t, rec, w.op)
}

// TestTimeRule: every kind a delegate signs is judged at its issued_at and
// at the time the ledger accepted it, which the signer does not choose: a
// back-dated act accepted after the signer's window ended is refused
// (outside-window) even though its issued_at is inside the window; an act
// accepted before the window opens likewise; and issued_at must lie
// within 5 minutes after and 24 hours before its acceptance. Boundaries
// to the second.
func TestTimeRule(t *testing.T) {
	kinds := []schemas.Kind{schemas.KindDelegation, schemas.KindPin, schemas.KindInstruction, schemas.KindRevocation, schemas.KindQuarantine}
	cases := []struct {
		name             string
		issued, accepted time.Time
		rule             string
	}{
		{"accepted a second before the window ends", windowEnd.Add(-time.Hour), windowEnd.Add(-time.Second), ""},
		{"back-dated, accepted as the window ends", windowEnd.Add(-time.Hour), windowEnd, delegation.RuleOutsideWindow},
		{"back-dated, accepted a second after the window ended", windowEnd.Add(-time.Hour), windowEnd.Add(time.Second), delegation.RuleOutsideWindow},
		{"back-dated by years (skew rule first)", windowEnd.Add(-3 * 365 * 24 * time.Hour), windowEnd.Add(time.Hour), delegation.RuleIssuedAt},
		{"issued at the skew limit after acceptance", testkit.Epoch.Add(delegation.MaxClockSkew), testkit.Epoch, ""},
		{"issued a second past the skew limit", testkit.Epoch.Add(delegation.MaxClockSkew + time.Second), testkit.Epoch, delegation.RuleIssuedAt},
		{"issued at the age limit before acceptance", testkit.Epoch.Add(-delegation.MaxRecordAge + time.Hour), testkit.Epoch.Add(time.Hour), ""},
		{"issued a second past the age limit", testkit.Epoch.Add(-delegation.MaxRecordAge + time.Hour - time.Second), testkit.Epoch.Add(time.Hour), delegation.RuleIssuedAt},
	}
	for _, k := range kinds {
		for _, tc := range cases {
			t.Run(string(k)+"/"+tc.name, func(t *testing.T) {
				w := newTimeWorld(t)
				chainTimed(t, tc.rule, tc.accepted, append(w.base, w.act(t, k, tc.issued))...)
			})
		}
	}
}

// TestTimeRuleWindowNotBegun: a key whose window opens in the future
// cannot act now by dating its act inside the window: the act is judged
// when the ledger accepts it too.
func TestTimeRuleWindowNotBegun(t *testing.T) {
	r1, op := testkit.Key(t, 1), testkit.Key(t, 30)
	opens := testkit.Epoch.Add(time.Hour)
	d := testkit.Delegation(op, []string{"instruct"}, "demo", "runner-*")
	d.NotBefore = opens.Unix()
	base := [][]byte{testkit.Seal(t, testkit.Root(1, r1), r1), testkit.Seal(t, d, r1)}
	in := func(issued time.Time) []byte {
		i := testkit.Instruction("0123456789abcdef0123456789abcdef")
		i.IssuedAt = issued.Unix()
		return testkit.Seal(t, i, op)
	}
	// Issued inside the window (within the skew), accepted a second
	// before it opens: refused; accepted as it opens: admitted.
	chainTimed(t, delegation.RuleOutsideWindow, opens.Add(-time.Second), append(base, in(opens.Add(time.Minute)))...)
	chainTimed(t, "", opens, append(base, in(opens.Add(time.Minute)))...)
}

// TestTimeRuleRoot: acts of the root threshold need the root in force at
// both instants; a rotation needs the old root in force when accepted; a
// root accepted at its own expiry trusts nothing.
func TestTimeRuleRoot(t *testing.T) {
	r1, r2, op := testkit.Key(t, 1), testkit.Key(t, 2), testkit.Key(t, 30)
	expires := testkit.Epoch.Add(2 * time.Hour)
	root := testkit.Root(1, r1)
	root.Expires = expires.Unix()
	genesis := testkit.Seal(t, root, r1)
	issued := expires.Add(-time.Hour)
	acts := map[string]schemas.Record{
		"delegation": func() schemas.Record {
			d := testkit.Delegation(op, []string{"instruct"}, "demo", "runner-*")
			d.IssuedAt = issued.Unix()
			return d
		}(),
		"issuer": &schemas.Issuer{V: 1, Issuer: "https://idp.example", JWKSURI: "https://idp.example/jwks", Audiences: []string{"writ"}, IssuedAt: issued.Unix()},
		"downgrade": &schemas.Downgrade{V: 1, Artifact: "agent", Version: "v1.0.0", Reason: "test", IssuedAt: issued.Unix(),
			Expires: expires.Add(time.Hour).Unix()},
		"quarantine": &schemas.Quarantine{V: 1, Machine: "runner-1", IssuedAt: issued.Unix()},
		"revocation": &schemas.Revocation{V: 1, Target: op.Public().ID(), Reason: "test", IssuedAt: issued.Unix()},
		"rotation": func() schemas.Record {
			r := testkit.Root(1, r2)
			r.Version, r.IssuedAt = 2, issued.Unix()
			return r
		}(),
	}
	for name, rec := range acts {
		t.Run(name, func(t *testing.T) {
			entries := [][]byte{genesis}
			if name == "revocation" {
				entries = append(entries, testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "demo", "runner-*"), r1))
			}
			signers := []*sign.PrivateKey{r1}
			if name == "rotation" {
				signers = append(signers, r2)
			}
			last := testkit.Seal(t, rec, signers...)
			chainTimed(t, "", expires.Add(-time.Second), append(entries, last)...)
			chainTimed(t, delegation.RuleRootExpired, expires, append(entries, last)...)
		})
	}
	// A root accepted at its expiry trusts nothing.
	chainTimed(t, delegation.RuleRootExpired, expires, genesis)
	chainTimed(t, "", expires.Add(-time.Second), genesis)
}

// TestQuarantineOrder: a quarantine act issued before the machine's act
// in force is refused (a lift signed before the quarantine cannot end
// it), and the root threshold's quarantine is lifted only by the root
// threshold, never by a delegate holding quarantine.
func TestQuarantineOrder(t *testing.T) {
	r1, ops := testkit.Key(t, 1), testkit.Key(t, 30)
	opsDel := testkit.Delegation(ops, []string{"quarantine"}, "demo", "runner-*")
	q := func(issued time.Time, lift bool, key *sign.PrivateKey) []byte {
		return testkit.Seal(t, &schemas.Quarantine{V: 1, Machine: "runner-1", Lift: lift, IssuedAt: issued.Unix()}, key)
	}
	base := [][]byte{testkit.Seal(t, testkit.Root(1, r1), r1), testkit.Seal(t, opsDel, r1)}
	at := testkit.Epoch
	// The delegate's quarantine, then its own earlier-signed lift: stale.
	chain(t, delegation.RuleSuperseded, append(base, q(at, false, ops), q(at.Add(-time.Second), true, ops))...)
	// The same lift signed after the quarantine ends it.
	st := chain(t, "", append(base, q(at.Add(-time.Minute), false, ops), q(at, true, ops))...)
	if st.Quarantine("runner-1", at.Unix()) != nil {
		t.Fatal("a later lift did not end the quarantine")
	}
	// The root's quarantine: a delegate's lift is refused, the root's ends it.
	chain(t, delegation.RuleThreshold, append(base, q(at.Add(-time.Minute), false, r1), q(at, true, ops))...)
	st = chain(t, "", append(base, q(at.Add(-time.Minute), false, r1), q(at, true, r1))...)
	if st.Quarantine("runner-1", at.Unix()) != nil {
		t.Fatal("the root's lift did not end its quarantine")
	}
	// Once the root has lifted its quarantine, or it has ended, a
	// delegate may quarantine the machine again.
	chain(t, "", append(base, q(at.Add(-time.Minute), false, r1), q(at, true, r1), q(at, false, ops))...)
	ended := testkit.Seal(t, &schemas.Quarantine{V: 1, Machine: "runner-1", Until: at.Add(time.Minute).Unix(), IssuedAt: at.Unix()}, r1)
	chainTimed(t, "", at.Add(2*time.Minute), append(base, ended, q(at.Add(2*time.Minute), false, ops))...)
	chainTimed(t, delegation.RuleThreshold, at.Add(30*time.Second), append(base, ended, q(at.Add(30*time.Second), true, ops))...)
	// A delegate's lift dated ahead (within the skew) does not lock the
	// root out: the root's act is judged against the time the ledger
	// accepted the lift, and is in force from its own acceptance.
	st = chain(t, "", append(base, q(at.Add(4*time.Minute), true, ops), q(at, false, r1))...)
	if st.Quarantine("runner-1", at.Unix()) == nil {
		t.Fatal("the root's quarantine after a forward-dated lift is not in force")
	}
}

// TestQuarantineInForceFromAcceptance: a quarantine is in force from the
// time the ledger accepted it, whatever issued_at its signer wrote.
func TestQuarantineInForceFromAcceptance(t *testing.T) {
	r1 := testkit.Key(t, 1)
	ahead := testkit.Seal(t, &schemas.Quarantine{V: 1, Machine: "runner-1", IssuedAt: testkit.Epoch.Add(4 * time.Minute).Unix()}, r1)
	st := chain(t, "", testkit.Seal(t, testkit.Root(1, r1), r1), ahead)
	if st.Quarantine("runner-1", testkit.Epoch.Unix()) == nil {
		t.Fatal("a quarantine dated 4 minutes ahead is not in force when accepted")
	}
	if st.Quarantine("runner-1", testkit.Epoch.Add(-time.Second).Unix()) != nil {
		t.Fatal("a quarantine is in force before the ledger accepted it")
	}
}

// TestRootActDatedBeforeItsRoot: an act of the root threshold dated
// before the root whose keys sign it was issued is refused: those keys
// held no authority then.
func TestRootActDatedBeforeItsRoot(t *testing.T) {
	r1 := testkit.Key(t, 1)
	root := testkit.Root(1, r1)
	del := testkit.Delegation(testkit.Key(t, 30), []string{"instruct"}, "demo", "runner-*")
	del.IssuedAt = root.IssuedAt - 1
	chain(t, delegation.RuleOutsideWindow, testkit.Seal(t, root, r1), testkit.Seal(t, del, r1))
	del.IssuedAt = root.IssuedAt
	chain(t, "", testkit.Seal(t, root, r1), testkit.Seal(t, del, r1))
}

// TestRotationDatedBeforePrevious: a rotation dated before the root whose
// keys sign it was issued is refused, and so a later root cannot carry
// acts back before the first existed.
func TestRotationDatedBeforePrevious(t *testing.T) {
	r1, r2 := testkit.Key(t, 1), testkit.Key(t, 2)
	v1 := testkit.Root(1, r1)
	v2 := testkit.Root(1, r2)
	v2.Version, v2.IssuedAt = 2, v1.IssuedAt-1
	chain(t, delegation.RuleOutsideWindow, testkit.Seal(t, v1, r1), testkit.Seal(t, v2, r1, r2))
	v2.IssuedAt = v1.IssuedAt + 1
	chain(t, "", testkit.Seal(t, v1, r1), testkit.Seal(t, v2, r1, r2))
}

// TestRootActAcrossRotation: a root act dated while root v1 was in force
// and accepted under v2 stands when its signers held both roots'
// thresholds (keys kept across the rotation), and is refused when they
// are keys only v2 made root keys.
func TestRootActAcrossRotation(t *testing.T) {
	r1, r2, n1 := testkit.Key(t, 1), testkit.Key(t, 2), testkit.Key(t, 3)
	v1 := testkit.Root(1, r1)
	v2 := testkit.Root(1, r1, n1)
	v2.Version, v2.IssuedAt, v2.Threshold = 2, testkit.Epoch.Add(-10*time.Minute).Unix(), 1
	v2b := testkit.Root(1, r2)
	v2b.Version, v2b.IssuedAt = 2, testkit.Epoch.Add(-5*time.Minute).Unix()
	del := testkit.Delegation(testkit.Key(t, 30), []string{"instruct"}, "demo", "runner-*")
	del.IssuedAt = testkit.Epoch.Add(-30 * time.Minute).Unix() // v1's time
	genesis := testkit.Seal(t, v1, r1)
	// r1 is a key of v1 and v2: its act dated in v1's time stands.
	chain(t, "", genesis, testkit.Seal(t, v2, r1, n1), testkit.Seal(t, del, r1))
	// n1 became a root key with v2: the same act by n1 alone is refused.
	chain(t, delegation.RuleOutsideWindow, genesis, testkit.Seal(t, v2, r1, n1), testkit.Seal(t, del, n1))
	// r2 became the only root key with another v2.
	chain(t, delegation.RuleOutsideWindow, genesis, testkit.Seal(t, v2b, r1, r2), testkit.Seal(t, del, r2))
}
