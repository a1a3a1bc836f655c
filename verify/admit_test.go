package verify_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify"
)

const (
	platform = "linux/amd64"
	id       = "0123456789abcdef0123456789abcdef"
)

// agentPath is a Go binary TestMain builds once, from a git commit, so
// that it carries real, clean build metadata.
var agentPath string

func TestMain(m *testing.M) {
	var remove func()
	agentPath, remove = testkit.AgentForMain("writ-verify-agent-")
	code := m.Run()
	remove()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == "" {
		code = checkRuleCoverage()
	}
	os.Exit(code)
}

// asserted holds the rules a test asserted in all three modes (expect,
// admitIn, TestAdmitRules).
var asserted = struct {
	sync.Mutex
	rules map[string]bool
}{rules: map[string]bool{}}

func assertedRule(rule string) {
	asserted.Lock()
	asserted.rules[rule] = true
	asserted.Unlock()
}

// runnerRules are asserted in the three modes by package verify/runner's
// tests, through a runner (its TestMain checks them there).
var runnerRules = map[string]bool{
	rules.Revoked: true, rules.Internal: true, rules.LedgerUnverified: true, rules.LedgerInconsistent: true,
	rules.RootUntrusted: true, rules.VKeyMismatch: true, rules.LedgerUnwitnessed: true, rules.Replay: true,
	rules.WorkClaimed: true, rules.ReceiptMissing: true, rules.ReceiptInvalid: true,
}

// checkRuleCoverage fails the package when a rule of the vocabulary has
// no test asserting its exact verdict in each of the three modes, here
// or (runnerRules) in package verify/runner. It runs only when every test
// ran.
func checkRuleCoverage() int {
	code := 0
	for _, r := range verify.Rules {
		if !asserted.rules[r.ID] && !runnerRules[r.ID] {
			fmt.Fprintf(os.Stderr, "rule %s: no test asserts its verdict in off, warn and enforce\n", r.ID)
			code = 1
		}
	}
	return code
}

func realAgent(t *testing.T) string { return agentPath }

type fixture struct {
	st                       *delegation.State
	root, op, late, stranger *sign.PrivateKey
	agent, otherFile         string
}

// newFixture builds a real authority state: a root, an operator who may
// instruct "demo" on runner-*, an operator whose delegation ended before
// Epoch, a release engineer, and a pin of a real file's digest.
func newFixture(t *testing.T, editRoot func(*schemas.Root), editPin func(*schemas.Pin), editRel func(*schemas.Delegation)) *fixture {
	t.Helper()
	f := &fixture{root: testkit.Key(t, 1), op: testkit.Key(t, 10), late: testkit.Key(t, 12), stranger: testkit.Key(t, 99)}
	rel := testkit.Key(t, 11)
	dir := t.TempDir()
	f.agent, f.otherFile = filepath.Join(dir, "agent"), filepath.Join(dir, "other")
	bin, err := os.ReadFile(realAgent(t))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(f.agent, bin, 0o755)
	bin[len(bin)-1] ^= 1
	os.WriteFile(f.otherFile, bin, 0o755)
	root := testkit.Root(1, f.root)
	if editRoot != nil {
		editRoot(root)
	}
	lateDel := testkit.Delegation(f.late, []string{"instruct"}, "demo", "runner-*")
	lateDel.NotAfter = testkit.Epoch.Add(-time.Hour).Unix()
	pin, err := transfer.NewPin(f.agent, transfer.PinOptions{Artifact: "agent", Version: "1.0.0", Platform: platform,
		IssuedAt: testkit.Epoch.Add(-time.Hour), Expires: testkit.Epoch.Add(30 * 24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if editPin != nil {
		editPin(pin)
	}
	relDel := testkit.Delegation(rel, []string{"pin"}, "", "")
	if editRel != nil {
		editRel(relDel)
	}
	f.st = delegation.NewState()
	for _, e := range [][]byte{
		testkit.Seal(t, root, f.root),
		testkit.Seal(t, testkit.Delegation(f.op, []string{"instruct"}, "demo", "runner-*"), f.root),
		testkit.Seal(t, lateDel, f.root),
		testkit.Seal(t, relDel, f.root),
		testkit.Seal(t, pin, rel),
	} {
		if _, err := f.st.Apply(e, testkit.Epoch.Add(-30*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func cfg(mode verify.Mode) verify.Config {
	return verify.Config{Machine: "runner-1", Mode: mode, Platform: platform, Now: func() time.Time { return testkit.Epoch }}
}

func instr(edit func(*schemas.Instruction)) *schemas.Instruction {
	i := testkit.Instruction(id)
	if edit != nil {
		edit(i)
	}
	return i
}

func bare(t *testing.T, i *schemas.Instruction) []byte {
	b, err := schemas.Encode(i)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAdmitRules: the smallest dispatch that triggers each rule, and the
// exact verdict in each of the three modes.
func TestAdmitRules(t *testing.T) {
	f := newFixture(t, nil, nil, nil)
	signed := testkit.Seal(t, instr(nil), f.op)
	badSig := append([]byte(nil), signed...)
	badSig[len(badSig)-1] ^= 1
	tests := []struct {
		name     string
		st       *delegation.State
		raw      []byte
		agent    string
		rule     string
		verdicts [3]schemas.Verdict // off, warn, enforce
	}{
		{"ok", nil, signed, f.agent, rules.OK, [3]schemas.Verdict{"admitted", "admitted", "admitted"}},
		{"malformed", nil, []byte("garbage"), f.agent, rules.MalformedDispatch, refusedAll},
		{"unsigned", nil, bare(t, instr(nil)), f.agent, rules.Unsigned, unsignedish},
		{"bad signature (tamper evidence: refused in every mode)", nil, badSig, f.agent, rules.BadSignature, refusedAll},
		{"two signatures on one instruction", nil, testkit.Seal(t, instr(nil), f.op, f.stranger), f.agent, rules.MalformedDispatch, refusedAll},
		{"issued in the future", nil, testkit.Seal(t, instr(func(i *schemas.Instruction) {
			i.IssuedAt = testkit.Epoch.Add(time.Hour).Unix()
			i.Expires = testkit.Epoch.Add(2 * time.Hour).Unix()
		}), f.op), f.agent, rules.NotYetValid, softAll},
		{"pin signer's delegation has ended", newFixture(t, nil, nil, func(d *schemas.Delegation) { d.NotAfter = testkit.Epoch.Unix() }).st, signed, f.agent, rules.OutsideWindow, softAll},
		{"unknown key", nil, testkit.Seal(t, instr(nil), f.stranger), f.agent, rules.UnknownKey, unsignedish},
		{"signed as a pin", nil, signAs(t, schemas.KindPin, instr(nil), f.op), f.agent, rules.WrongKind, unsignedish},
		{"wrong machine", nil, testkit.Seal(t, instr(func(i *schemas.Instruction) { i.Machine = "runner-2" }), f.op), f.agent, rules.WrongMachine, refusedAll},
		{"no delegation", nil, testkit.Seal(t, instr(nil), f.root), f.agent, rules.NoDelegation, unsignedish},
		{"out of scope", nil, testkit.Seal(t, instr(func(i *schemas.Instruction) { i.Stream = "other" }), f.op), f.agent, rules.OutOfScope, unsignedish},
		{"outside window", nil, testkit.Seal(t, instr(nil), f.late), f.agent, rules.OutsideWindow, unsignedish},
		{"root expired", newFixture(t, func(r *schemas.Root) { r.Expires = testkit.Epoch.Unix() }, nil, nil).st, signed, f.agent, rules.RootExpired, unsignedish},
		{"not yet valid", nil, testkit.Seal(t, instr(func(i *schemas.Instruction) { i.NotBefore = testkit.Epoch.Add(time.Minute).Unix() }), f.op), f.agent, rules.NotYetValid, softAll},
		{"expired", nil, testkit.Seal(t, instr(func(i *schemas.Instruction) { i.Expires = testkit.Epoch.Unix() }), f.op), f.agent, rules.Expired, softAll},
		{"agent not pinned", nil, testkit.Seal(t, instr(func(i *schemas.Instruction) { i.Agent.Name = "other" }), f.op), f.agent, rules.AgentNotPinned, softAll},
		{"pin expired", newFixture(t, nil, func(p *schemas.Pin) { p.Expires = testkit.Epoch.Unix() }, nil).st, signed, f.agent, rules.PinExpired, softAll},
		{"instruction names another digest", nil, testkit.Seal(t, instr(func(i *schemas.Instruction) { i.Agent.Digest = "sha256:" + strings.Repeat("1", 64) }), f.op), f.agent, rules.AgentPinMismatch, refusedAll},
		{"agent binary missing", nil, signed, filepath.Join(t.TempDir(), "absent"), rules.AgentBinaryMissing, refusedAll},
		{"agent binary changed", nil, signed, f.otherFile, rules.AgentDigestMismatch, refusedAll},
		{"unsigned and changed: integrity wins", nil, bare(t, instr(nil)), f.otherFile, rules.AgentDigestMismatch, refusedAll},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st
			if st == nil {
				st = f.st
			}
			for i, mode := range []verify.Mode{verify.ModeOff, verify.ModeWarn, verify.ModeEnforce} {
				v := verify.Admit(st, cfg(mode), verify.Dispatch{Raw: tc.raw, AgentBinary: tc.agent})
				if v.Rule != tc.rule || v.Verdict != tc.verdicts[i] {
					t.Fatalf("mode %s: %s / %s (%s), want %s / %s; failed %v", mode, v.Verdict, v.Rule, v.Reason, tc.verdicts[i], tc.rule, v.Failed)
				}
				r, _ := verify.LookupRule(v.Rule)
				if v.Class != r.Class || v.NextAct != r.NextActIn(string(mode)) || v.Mode != mode {
					t.Fatalf("class/next act/mode not from the rule table: %+v", v)
				}
				d := verify.Decision(v)
				if err := d.Validate(); err != nil {
					t.Fatalf("decision record: %v", err)
				}
			}
			assertedRule(tc.rule)
		})
	}
}

var (
	refusedAll  = [3]schemas.Verdict{"refused", "refused", "refused"}
	unsignedish = [3]schemas.Verdict{"admitted-unsigned", "would-refuse", "refused"}
	softAll     = [3]schemas.Verdict{"admitted", "would-refuse", "refused"}
)

func signAs(t *testing.T, k schemas.Kind, i *schemas.Instruction, key *sign.PrivateKey) []byte {
	env, err := sign.Sign(k, bare(t, i), key)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestAdmitEvidence: a digest mismatch carries both digests, and the
// signer is recorded only when verified.
func TestAdmitEvidence(t *testing.T) {
	f := newFixture(t, nil, nil, nil)
	v := verify.Admit(f.st, cfg(verify.ModeOff), verify.Dispatch{Raw: testkit.Seal(t, instr(nil), f.op), AgentBinary: f.otherFile})
	want, _, _ := transfer.DigestFile(f.otherFile)
	pinned, _, _ := transfer.DigestFile(f.agent)
	if len(v.Compared) != 1 || v.Compared[0].Actual != want || v.Compared[0].Expected != pinned {
		t.Fatalf("compared %+v", v.Compared)
	}
	if v.Signer != f.op.Public().ID() {
		t.Fatalf("signer %q", v.Signer)
	}
	v = verify.Admit(f.st, cfg(verify.ModeOff), verify.Dispatch{Raw: testkit.Seal(t, instr(nil), f.stranger), AgentBinary: f.agent})
	if v.Signer != "" {
		t.Fatalf("an unverified signer was recorded: %q", v.Signer)
	}
	d := verify.Decision(v)
	if d.InstructionID != id || d.Verdict != "admitted-unsigned" || d.Failed[0] != rules.UnknownKey {
		t.Fatalf("decision %+v", d)
	}
}

// TestAdmitFailsClosed: a panic inside the verdict path is a refusal under
// the internal rule, never an admission.
func TestAdmitFailsClosed(t *testing.T) {
	f := newFixture(t, nil, nil, nil)
	c := cfg(verify.ModeOff)
	c.HighWater = verify.MarkMap{"agent": "v2.0.0"}
	v := verify.Admit(nil, c, verify.Dispatch{Raw: testkit.Seal(t, instr(nil), f.op), AgentBinary: f.agent})
	if v.Verdict != verify.Refused || v.Rule != rules.Internal {
		t.Fatalf("verdict %s / %s", v.Verdict, v.Rule)
	}
	if m := v.HighWater["agent"]; m != "" && m != "v2.0.0" {
		t.Fatalf("an internal refusal changed the high-water mark: %v", v.HighWater)
	}
	v = verify.RefuseLedger(cfg(verify.ModeOff), verify.Dispatch{Raw: []byte("x")}, rules.LedgerUnverified, errors.New("entry 3: leaf hash"))
	if v.Verdict != verify.Refused || v.Rule != rules.LedgerUnverified {
		t.Fatalf("verdict %s / %s", v.Verdict, v.Rule)
	}
}

// TestRuleTable: every rule id is unique and has a class, a summary and a
// next act; every rule named in the package doc is in the table.
func TestRuleTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range verify.Rules {
		if seen[r.ID] || r.Class == "" || r.Summary == "" || r.NextAct == "" {
			t.Errorf("rule %+v is duplicated or incomplete", r)
		}
		seen[r.ID] = true
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for id := range seen {
		if !strings.Contains(string(doc), "//\t"+id+" ") {
			t.Errorf("rule %s is not in the package doc's table", id)
		}
	}
}

// extend applies more authority records to a fresh fixture's state.
func (f *fixture) extend(t *testing.T, entries ...[]byte) *delegation.State {
	t.Helper()
	for _, e := range entries {
		if _, err := f.st.Apply(e, testkit.Epoch); err != nil {
			t.Fatal(err)
		}
	}
	return f.st
}

// TestAdmitQuarantineAndRevocation: a quarantined machine is admitted no
// work in any mode; a revoked signer is refused under enforce.
func TestAdmitQuarantineAndRevocation(t *testing.T) {
	f := newFixture(t, nil, nil, nil)
	q := &schemas.Quarantine{V: 1, Machine: "runner-1", IssuedAt: testkit.Epoch.Add(-time.Minute).Unix()}
	st := f.extend(t, testkit.Seal(t, q, f.root))
	signed := testkit.Seal(t, instr(nil), f.op)
	for _, mode := range []verify.Mode{verify.ModeOff, verify.ModeWarn, verify.ModeEnforce} {
		v := verify.Admit(st, cfg(mode), verify.Dispatch{Raw: signed, AgentBinary: f.agent})
		if v.Verdict != verify.Refused || v.Rule != rules.Quarantined {
			t.Fatalf("quarantined, mode %s: %s / %s", mode, v.Verdict, v.Rule)
		}
	}
	assertedRule(rules.Quarantined)
	f = newFixture(t, nil, nil, nil)
	rev := &schemas.Revocation{V: 1, Target: f.op.Public().ID(), Reason: "compromised", IssuedAt: testkit.Epoch.Add(-time.Minute).Unix()}
	st = f.extend(t, testkit.Seal(t, rev, f.root))
	v := verify.Admit(st, cfg(verify.ModeEnforce), verify.Dispatch{Raw: signed, AgentBinary: f.agent})
	if v.Verdict != verify.Refused || v.Rule != rules.Revoked {
		t.Fatalf("revoked signer: %s / %s (%s)", v.Verdict, v.Rule, v.Reason)
	}
	v = verify.Admit(st, cfg(verify.ModeWarn), verify.Dispatch{Raw: signed, AgentBinary: f.agent})
	if v.Verdict != verify.WouldRefuse || v.Rule != rules.Revoked {
		t.Fatalf("revoked signer under warn: %s / %s", v.Verdict, v.Rule)
	}
}

// TestAdmitBuildMismatch: a pin whose recorded build metadata is not what
// the binary (with the pinned digest) carries is refused in every mode:
// the pin misdescribes what it pins.
func TestAdmitBuildMismatch(t *testing.T) {
	f := newFixture(t, nil, func(p *schemas.Pin) { p.Build.Revision = strings.Repeat("1", 40) }, nil)
	signed := testkit.Seal(t, instr(nil), f.op)
	for n, mode := range []verify.Mode{verify.ModeOff, verify.ModeWarn, verify.ModeEnforce} {
		v := verify.Admit(f.st, cfg(mode), verify.Dispatch{Raw: signed, AgentBinary: f.agent})
		if v.Rule != rules.BuildMismatch || v.Verdict != refusedAll[n] || !strings.Contains(v.Reason, strings.Repeat("1", 40)) {
			t.Fatalf("mode %s: %s / %s (%s)", mode, v.Verdict, v.Rule, v.Reason)
		}
	}
	assertedRule(rules.BuildMismatch)
}
