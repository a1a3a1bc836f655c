package delegation_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"filippo.io/edwards25519"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

const digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// apply applies entries in order, each accepted by the ledger at Epoch,
// and returns the state and the error of the last one.
func apply(t *testing.T, entries ...[]byte) (*delegation.State, error) {
	t.Helper()
	return applyTimed(t, testkit.Epoch, entries...)
}

// applyTimed is apply with the last entry accepted at last (and every
// entry at last when that is before Epoch).
func applyTimed(t *testing.T, last time.Time, entries ...[]byte) (*delegation.State, error) {
	t.Helper()
	st := delegation.NewState()
	for i, e := range entries {
		at := testkit.Epoch
		if i == len(entries)-1 || last.Before(at) {
			at = last // times never decrease along a log
		}
		if _, err := st.Apply(e, at); err != nil {
			if i != len(entries)-1 {
				t.Fatalf("entry %d: %v", i, err)
			}
			return st, err
		}
	}
	return st, nil
}

func TestApplyRules(t *testing.T) {
	r1, r2, r3 := testkit.Key(t, 1), testkit.Key(t, 2), testkit.Key(t, 3)
	op, rel := testkit.Key(t, 10), testkit.Key(t, 11)
	root1 := testkit.Seal(t, testkit.Root(1, r1), r1)
	root23 := testkit.Root(2, r1, r2, r3)
	opDel := testkit.Delegation(op, []string{"instruct"}, "demo", "runner-*")
	relDel := testkit.Delegation(rel, []string{"pin"}, "", "")
	pin := testkit.Pin("linux/amd64", digest, 1)
	decision := &schemas.Decision{V: 1, Time: 1, Machine: "m", Mode: "off", Verdict: "admitted", Rule: "ok", InstructionDigest: digest}

	tests := []struct {
		name    string
		entries [][]byte
		rule    string // "" means accepted
	}{
		{"root 1-of-1", [][]byte{root1}, ""},
		{"root 2-of-3 with two signatures", [][]byte{testkit.Seal(t, root23, r1, r3)}, ""},
		{"root 2-of-3 with one signature", [][]byte{testkit.Seal(t, root23, r2)}, delegation.RuleThreshold},
		{"root signed by a key it does not list", [][]byte{testkit.Seal(t, testkit.Root(1, r1), r2)}, delegation.RuleThreshold},
		{"entry 0 is not a root", [][]byte{testkit.Seal(t, opDel, r1)}, delegation.RuleWrongKind},
		{"garbage", [][]byte{[]byte("garbage")}, delegation.RuleMalformed},
		{"delegation by the root", [][]byte{root1, testkit.Seal(t, opDel, r1)}, ""},
		{"delegation by one key of a 2-of-3 root", [][]byte{testkit.Seal(t, root23, r1, r2), testkit.Seal(t, opDel, r3)}, delegation.RuleThreshold},
		{"delegation by two keys of a 2-of-3 root", [][]byte{testkit.Seal(t, root23, r1, r2), testkit.Seal(t, opDel, r2, r3)}, ""},
		{"re-delegation by a delegate without the delegate action", [][]byte{root1, testkit.Seal(t, opDel, r1), testkit.Seal(t, relDel, op)}, delegation.RuleOutOfScope},
		{"delegation by an unknown key", [][]byte{root1, testkit.Seal(t, opDel, op)}, delegation.RuleUnknownKey},
		{"pin by a delegated key", [][]byte{root1, testkit.Seal(t, relDel, r1), testkit.Seal(t, pin, rel)}, ""},
		{"pin by the root key itself", [][]byte{root1, testkit.Seal(t, pin, r1)}, delegation.RuleNoDelegation},
		{"pin by a key delegated instruct only", [][]byte{root1, testkit.Seal(t, opDel, r1), testkit.Seal(t, pin, op)}, delegation.RuleOutOfScope},
		{"instruction in scope", [][]byte{root1, testkit.Seal(t, opDel, r1), testkit.Seal(t, testkit.Instruction(id), op)}, ""},
		{"a second root of the same version", [][]byte{root1, testkit.Seal(t, testkit.Root(1, r1, r2), r1)}, delegation.RuleRootVersion},
		{"a delegation padded with a stranger's signature", [][]byte{root1, testkit.Seal(t, opDel, r1, op)}, delegation.RuleUnknownKey},
		{"the same delegation with one of its signatures dropped", [][]byte{testkit.Seal(t, root23, r1, r2),
			testkit.Seal(t, opDel, r1, r2, r3), testkit.Seal(t, opDel, r1, r3)}, delegation.RuleDuplicate},
		{"the same record signed again (Ed25519 is deterministic)", [][]byte{root1, testkit.Seal(t, opDel, r1), testkit.Seal(t, relDel, r1), testkit.Seal(t, opDel, r1)}, delegation.RuleDuplicate},
		{"the same bytes twice", [][]byte{root1, root1}, delegation.RuleDuplicate},
		{"a decision in the authority log", [][]byte{root1, testkit.Seal(t, decision, r1)}, delegation.RuleWrongKind},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := apply(t, tc.entries...)
			if tc.rule == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if st.Size() != int64(len(tc.entries)) {
					t.Fatalf("size %d", st.Size())
				}
				return
			}
			var re *delegation.RecordError
			if !errors.As(err, &re) || re.Rule != tc.rule || !errors.Is(err, delegation.ErrRefused) {
				t.Fatalf("Apply = %v, want rule %s", err, tc.rule)
			}
			if re.Index != int64(len(tc.entries)-1) || st.Size() != re.Index {
				t.Fatalf("refusal at index %d, state size %d", re.Index, st.Size())
			}
		})
	}
}

const id = "0123456789abcdef0123456789abcdef"

func TestAuthorize(t *testing.T) {
	r1, op := testkit.Key(t, 1), testkit.Key(t, 10)
	root := testkit.Root(1, r1)
	root.Expires = testkit.Epoch.Add(48 * time.Hour).Unix()
	d := testkit.Delegation(op, []string{"instruct"}, "team/*", "runner-*")
	st, err := apply(t, testkit.Seal(t, root, r1), testkit.Seal(t, d, r1))
	if err != nil {
		t.Fatal(err)
	}
	req := func(stream, machine string, at time.Time, k sign.PublicKey) delegation.Request {
		return delegation.Request{Key: k, Action: "instruct", Stream: stream, Machine: machine, At: at}
	}
	tests := []struct {
		name string
		req  delegation.Request
		rule string
	}{
		{"in scope", req("team/a", "runner-1", testkit.Epoch, op.Public()), ""},
		{"'*' does not cross '/'", req("team/a/b", "runner-1", testkit.Epoch, op.Public()), delegation.RuleOutOfScope},
		{"other machine", req("team/a", "builder-1", testkit.Epoch, op.Public()), delegation.RuleOutOfScope},
		{"other action", delegation.Request{Key: op.Public(), Action: "pin", Artifact: "agent", At: testkit.Epoch}, delegation.RuleOutOfScope},
		{"key without delegation", req("team/a", "runner-1", testkit.Epoch, r1.Public()), delegation.RuleNoDelegation},
		{"at not_after (exclusive)", req("team/a", "runner-1", time.Unix(d.NotAfter, 0), op.Public()), delegation.RuleOutsideWindow},
		{"one second before not_after", req("team/a", "runner-1", time.Unix(d.NotAfter-1, 0), op.Public()), ""},
		{"before not_before", req("team/a", "runner-1", time.Unix(d.NotBefore-1, 0), op.Public()), delegation.RuleOutsideWindow},
		{"at the root's expiry", req("team/a", "runner-1", time.Unix(root.Expires, 0), op.Public()), delegation.RuleRootExpired},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := st.Authorize(tc.req)
			if tc.rule == "" {
				if err != nil || g == nil || g.Index != 1 {
					t.Fatalf("Authorize = %v, %v", g, err)
				}
				return
			}
			var den *delegation.Denial
			if !errors.As(err, &den) || den.Rule != tc.rule || g != nil {
				t.Fatalf("Authorize = %v, %v; want rule %s", g, err, tc.rule)
			}
		})
	}
}

// TestTorsionKeyIsNotASecondKey: a root listing A and A + T (T of order 8)
// is refused, so one secret can never count as two distinct root keys;
// a delegation to A + T is refused too.
func TestTorsionKeyIsNotASecondKey(t *testing.T) {
	r1, r2 := testkit.Key(t, 1), testkit.Key(t, 2)
	a, err := new(edwards25519.Point).SetBytes(r1.Public().Raw())
	if err != nil {
		t.Fatal(err)
	}
	t8raw, _ := hex.DecodeString("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
	t8, err := new(edwards25519.Point).SetBytes(t8raw)
	if err != nil {
		t.Fatal(err)
	}
	twin := new(edwards25519.Point).Add(a, t8).Bytes()
	root := testkit.Root(2, r1)
	root.Keys = append(root.Keys, twin)
	slices.SortFunc(root.Keys, bytes.Compare)
	_, err = apply(t, testkit.Seal(t, root, r1))
	var re *delegation.RecordError
	if !errors.As(err, &re) || re.Rule != delegation.RuleMalformed || !errors.Is(err, sign.ErrInvalidKey) {
		t.Fatalf("root listing A and A+T: %v; want %s wrapping sign.ErrInvalidKey", err, delegation.RuleMalformed)
	}
	del := testkit.Delegation(r2, []string{"instruct"}, "demo", "runner-*")
	del.Key = twin
	_, err = apply(t, testkit.Seal(t, testkit.Root(1, r1), r1), testkit.Seal(t, del, r1))
	if !errors.As(err, &re) || re.Rule != delegation.RuleMalformed || !errors.Is(err, sign.ErrInvalidKey) {
		t.Fatalf("delegation to A+T: %v; want %s wrapping sign.ErrInvalidKey", err, delegation.RuleMalformed)
	}
}

// TestAppliedJSON: an applied record's JSON is its index, kind and
// digest only (writ ledger append prints it).
func TestAppliedJSON(t *testing.T) {
	b, err := json.Marshal(&delegation.Applied{Index: 2, Kind: "root", Digest: "sha256:00", Accepted: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"index":2,"kind":"root","digest":"sha256:00"}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}
