package runner_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

// runnerLedger is a real ledger directory on disk: an authority log (a
// root, an operator who may instruct "demo" on runner-*, a release
// engineer, a pin of the test agent) and the runner's key parameters.
type runnerLedger struct {
	dir                string
	logKey             *sign.PrivateKey
	root, op, op2, rel *sign.PrivateKey
	kp                 ledgerdir.KeyParams
	clock              atomic.Int64 // seconds after Epoch the runner's clock reads
}

const runnerOrigin = "example.com/runner"

func newRunnerLedger(t *testing.T) *runnerLedger {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	l := &runnerLedger{dir: t.TempDir(), logKey: testkit.Key(t, 50), root: testkit.Key(t, 1), op: testkit.Key(t, 10), op2: testkit.Key(t, 13), rel: testkit.Key(t, 11),
		kp: ledgerdir.KeyParams{Recipients: []age.Recipient{id.Recipient()}, Identities: []age.Identity{id}, Rand: rand.Reader}}
	createAuthority(t, filepath.Join(l.dir, ledgerdir.AuthorityDir), runnerOrigin, l.logKey, nil).Close()
	l.append(t, l.baseEntries(t, 30*24*time.Hour)...)
	return l
}

// baseEntries are the authority records every test starts from; the pin
// lasts pinFor after Epoch.
func (l *runnerLedger) baseEntries(t *testing.T, pinFor time.Duration) [][]byte {
	relDel := testkit.Delegation(l.rel, []string{"pin"}, "", "")
	pin, err := transfer.NewPin(agentPath, transfer.PinOptions{Artifact: "agent", Version: "1.0.0", Platform: platform,
		IssuedAt: testkit.Epoch.Add(-time.Hour), Expires: testkit.Epoch.Add(pinFor)})
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{
		testkit.Seal(t, testkit.Root(1, l.root), l.root),
		testkit.Seal(t, testkit.Delegation(l.op, []string{"instruct"}, "demo", "runner-*"), l.root),
		testkit.Seal(t, relDel, l.root),
		testkit.Seal(t, testkit.Delegation(l.op2, []string{"instruct"}, "demo", "runner-*"), l.root),
		testkit.Seal(t, pin, l.rel),
	}
}

// append appends entries to the authority log, as `writ ledger append`
// does from another process, and returns the index of the first.
func (l *runnerLedger) append(t *testing.T, entries ...[]byte) int64 {
	t.Helper()
	auth := openAuthority(t, filepath.Join(l.dir, ledgerdir.AuthorityDir), l.logKey, l.now)
	defer auth.Close()
	i, err := auth.Append(entries)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// receipt returns the authority log's receipt for entry index.
func (l *runnerLedger) receipt(t *testing.T, index int64) []byte {
	t.Helper()
	auth, err := ledger.Open(filepath.Join(l.dir, ledgerdir.AuthorityDir), l.logKey)
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	r, err := auth.Receipt(index)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (l *runnerLedger) config(mode verify.Mode) verify.Config {
	return verify.Config{Machine: "runner-1", Mode: mode, Platform: platform, Now: l.now}
}

// now is the test's clock, for the runner and the authority log alike:
// Epoch plus l.clock seconds.
func (l *runnerLedger) now() time.Time {
	return testkit.Epoch.Add(time.Duration(l.clock.Load()) * time.Second)
}

// open opens the runner with mode and cfg edits; it is closed when the
// test ends.
func (l *runnerLedger) open(t *testing.T, mode verify.Mode, trust verify.Trust, edit func(*verify.Config)) *runner.Runner {
	t.Helper()
	c := l.config(mode)
	if edit != nil {
		edit(&c)
	}
	r, err := runner.Open(l.dir, trust, l.kp, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// signed returns a signed instruction with the n-th id, edited.
func (l *runnerLedger) signed(t *testing.T, n int, edit func(*schemas.Instruction)) []byte {
	i := testkit.Instruction(fmt.Sprintf("%032x", n))
	if edit != nil {
		edit(i)
	}
	return testkit.Seal(t, i, l.op)
}

// admitBy admits the n-th instruction, edited, signed by key.
func (l *runnerLedger) admitBy(t *testing.T, r *runner.Runner, key *sign.PrivateKey, n int, edit func(*schemas.Instruction)) *verify.Verdict {
	t.Helper()
	i := testkit.Instruction(fmt.Sprintf("%032x", n))
	edit(i)
	v, _, err := r.Admit(verify.Dispatch{Raw: testkit.Seal(t, i, key), AgentBinary: agentPath})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// admitIn admits raw once in each mode, each by a runner opened for it
// and closed after (a restart between decisions), and asserts the rule
// and the three verdicts.
func (l *runnerLedger) admitIn(t *testing.T, trust verify.Trust, edit func(*verify.Config), d verify.Dispatch, rule string, verdicts [3]schemas.Verdict) {
	t.Helper()
	l.admitEach(t, trust, edit, [3]verify.Dispatch{d, d, d}, rule, verdicts)
}

// admitEach is admitIn with a dispatch for each mode: an instruction
// admitted under off would be a replay under warn.
func (l *runnerLedger) admitEach(t *testing.T, trust verify.Trust, edit func(*verify.Config), ds [3]verify.Dispatch, rule string, verdicts [3]schemas.Verdict) {
	t.Helper()
	for n, mode := range []verify.Mode{verify.ModeOff, verify.ModeWarn, verify.ModeEnforce} {
		d := ds[n]
		if d.AgentBinary == "" {
			d.AgentBinary = agentPath
		}
		r := l.open(t, mode, trust, edit)
		v, index, err := r.Admit(d)
		r.Close()
		if err != nil {
			t.Fatalf("mode %s: %v", mode, err)
		}
		if v.Rule != rule || v.Verdict != verdicts[n] {
			t.Fatalf("mode %s: %s / %s (%s), want %s / %s; failed %v", mode, v.Verdict, v.Rule, v.Reason, verdicts[n], rule, v.Failed)
		}
		l.checkRecorded(t, index, v)
	}
	assertedRule(rule)
}

// checkRecorded reads decision index back from the decision log and
// checks it records the verdict, the rule and the mode.
func (l *runnerLedger) checkRecorded(t *testing.T, index int64, v *verify.Verdict) {
	t.Helper()
	dec, err := ledgerdir.OpenDecisionsReadOnly(l.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	entry, err := dec.VerifiedEntry(index)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := schemas.Decode(schemas.KindDecision, entry)
	if err != nil {
		t.Fatal(err)
	}
	d := rec.(*schemas.Decision)
	if d.Verdict != v.Verdict || d.Rule != v.Rule || d.Mode != string(v.Mode) || d.InstructionID != v.InstructionID {
		t.Fatalf("decision %d records %s/%s/%s/%s, the verdict was %s/%s/%s/%s", index, d.Verdict, d.Rule, d.Mode, d.InstructionID, v.Verdict, v.Rule, v.Mode, v.InstructionID)
	}
}

// TestRunnerReplay: an admitted instruction id is refused as a replay in
// every mode, after a restart too; a refused one may come again; of 16
// concurrent admissions of one instruction exactly one is admitted.
func TestRunnerReplay(t *testing.T) {
	l := newRunnerLedger(t)
	once := l.signed(t, 1, nil)
	r := l.open(t, verify.ModeEnforce, verify.Trust{}, nil)
	v, index, err := r.Admit(verify.Dispatch{Raw: once, AgentBinary: agentPath})
	if err != nil || v.Verdict != verify.Admitted || index != 0 {
		t.Fatalf("first admission: %v %+v %d", err, v, index)
	}
	r.Close()
	l.admitIn(t, verify.Trust{}, nil, verify.Dispatch{Raw: once}, rules.Replay, refusedAll)
	r = l.open(t, verify.ModeOff, verify.Trust{}, nil)
	v, _, _ = r.Admit(verify.Dispatch{Raw: once, AgentBinary: agentPath})
	if !strings.Contains(v.Reason, "already admitted on this runner (decision 0)") {
		t.Fatalf("replay reason %q", v.Reason)
	}
	r.Close()

	// Unsigned: refused under enforce (not admitted, so not a replay
	// later), then admitted-unsigned under off, then a replay.
	unsigned := bare(t, testkit.Instruction(fmt.Sprintf("%032x", 2)))
	for _, step := range []struct {
		mode    verify.Mode
		verdict schemas.Verdict
		rule    string
	}{{verify.ModeEnforce, verify.Refused, rules.Unsigned}, {verify.ModeOff, verify.AdmittedUnsigned, rules.Unsigned}, {verify.ModeOff, verify.Refused, rules.Replay}} {
		r := l.open(t, step.mode, verify.Trust{}, nil)
		v, _, err := r.Admit(verify.Dispatch{Raw: unsigned, AgentBinary: agentPath})
		r.Close()
		if err != nil || v.Verdict != step.verdict || v.Rule != step.rule {
			t.Fatalf("unsigned under %s: %v %s/%s, want %s/%s", step.mode, err, v.Verdict, v.Rule, step.verdict, step.rule)
		}
	}

	// Concurrent admissions of one instruction: one wins.
	r = l.open(t, verify.ModeOff, verify.Trust{}, nil)
	raced := l.signed(t, 3, nil)
	var admitted, replays atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, _, err := r.Admit(verify.Dispatch{Raw: raced, AgentBinary: agentPath})
			switch {
			case err != nil:
				t.Error(err)
			case v.Verdict == verify.Admitted:
				admitted.Add(1)
			case v.Rule == rules.Replay:
				replays.Add(1)
			default:
				t.Errorf("%s/%s: %s", v.Verdict, v.Rule, v.Reason)
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 1 || replays.Load() != 15 {
		t.Fatalf("16 concurrent admissions: %d admitted, %d replays", admitted.Load(), replays.Load())
	}
}

// TestRunnerClaims: a live claim on a stream refuses the stream to other
// sessions and to instructions without a session, in every mode and
// across restarts, until it expires or its session releases it.
func TestRunnerClaims(t *testing.T) {
	l := newRunnerLedger(t)
	until := testkit.Epoch.Add(30 * time.Minute).Unix()
	claim := func(session string, release bool) func(*schemas.Instruction) {
		return func(i *schemas.Instruction) {
			i.Claim = &schemas.Claim{Session: session, Until: until, Release: release}
		}
	}
	r := l.open(t, verify.ModeEnforce, verify.Trust{}, nil)
	admit := func(n int, edit func(*schemas.Instruction)) *verify.Verdict {
		t.Helper()
		v, _, err := r.Admit(verify.Dispatch{Raw: l.signed(t, n, edit), AgentBinary: agentPath})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := admit(1, claim("s1", false)); v.Verdict != verify.Admitted {
		t.Fatalf("claim: %s/%s %s", v.Verdict, v.Rule, v.Reason)
	}
	if v := admit(2, claim("s1", false)); v.Verdict != verify.Admitted {
		t.Fatalf("same session: %s/%s %s", v.Verdict, v.Rule, v.Reason)
	}
	r.Close()
	// Another session, and no session, in each mode, each after a restart.
	l.admitIn(t, verify.Trust{}, nil, verify.Dispatch{Raw: l.signed(t, 3, claim("s2", false))}, rules.WorkClaimed, refusedAll)
	l.admitIn(t, verify.Trust{}, nil, verify.Dispatch{Raw: l.signed(t, 4, nil)}, rules.WorkClaimed, refusedAll)
	r = l.open(t, verify.ModeOff, verify.Trust{}, nil)
	v := admit(5, claim("s2", true))
	if v.Rule != rules.WorkClaimed || !strings.Contains(v.Reason, "claimed by session s1 (key "+l.op.Public().ID()+") until 2026-11-29T10:30:00Z (decision 1); this instruction comes from session s2") {
		t.Fatalf("another session releasing: %s/%s %q", v.Verdict, v.Rule, v.Reason)
	}
	// Another key naming the holder's session does not hold the claim, and
	// an unsigned instruction naming it neither holds nor takes it.
	v = l.admitBy(t, r, l.op2, 11, claim("s1", true))
	if v.Rule != rules.WorkClaimed || !strings.Contains(v.Reason, "this instruction comes from session s1, signed by key "+l.op2.Public().ID()) {
		t.Fatalf("another key, same session: %s/%s %q", v.Verdict, v.Rule, v.Reason)
	}
	unsignedClaim := testkit.Instruction(fmt.Sprintf("%032x", 12))
	unsignedClaim.Stream, unsignedClaim.Claim = "demo/other", &schemas.Claim{Session: "evil", Until: until}
	v, _, _ = r.Admit(verify.Dispatch{Raw: bare(t, unsignedClaim), AgentBinary: agentPath})
	if v.Verdict != verify.AdmittedUnsigned || v.Claim != nil {
		t.Fatalf("an unsigned claim under off: %s, claim %+v", v.Verdict, v.Claim)
	}
	// Another stream is not claimed.
	if v := admit(6, func(i *schemas.Instruction) { i.Stream = "demo" }); v.Rule != rules.WorkClaimed {
		t.Fatalf("same stream without session: %s", v.Rule)
	}
	// s1 releases; then s2 may claim.
	if v := admit(7, claim("s1", true)); v.Verdict != verify.Admitted {
		t.Fatalf("release: %s/%s %s", v.Verdict, v.Rule, v.Reason)
	}
	if v := admit(8, claim("s2", false)); v.Verdict != verify.Admitted {
		t.Fatalf("claim after release: %s/%s %s", v.Verdict, v.Rule, v.Reason)
	}
	// The claim lapses at until (exclusive).
	l.clock.Store(30*60 - 1)
	if v := admit(9, claim("s3", false)); v.Rule != rules.WorkClaimed {
		t.Fatalf("a second before the claim lapses: %s", v.Rule)
	}
	l.clock.Store(30 * 60)
	if v := admit(10, func(i *schemas.Instruction) {
		i.Claim = &schemas.Claim{Session: "s3", Until: until + 600}
	}); v.Verdict != verify.Admitted {
		t.Fatalf("after the claim lapsed: %s/%s %s", v.Verdict, v.Rule, v.Reason)
	}
	r.Close()

	// Two sessions claim concurrently: exactly one holds the stream.
	l.clock.Store(3600 * 2)
	r = l.open(t, verify.ModeOff, verify.Trust{}, nil)
	var won atomic.Int32
	var wg sync.WaitGroup
	for n := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw := l.signed(t, 100+n, func(i *schemas.Instruction) {
				i.IssuedAt, i.NotBefore = testkit.Epoch.Add(2*time.Hour).Unix(), testkit.Epoch.Add(2*time.Hour).Unix()
				i.Expires = testkit.Epoch.Add(3 * time.Hour).Unix()
				i.Claim = &schemas.Claim{Session: fmt.Sprintf("c%d", n), Until: testkit.Epoch.Add(3 * time.Hour).Unix()}
			})
			v, _, err := r.Admit(verify.Dispatch{Raw: raw, AgentBinary: agentPath})
			if err == nil && v.Admitted() {
				won.Add(1)
			} else if err != nil || v.Rule != rules.WorkClaimed {
				t.Errorf("%v %s/%s %s", err, v.Verdict, v.Rule, v.Reason)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d of 8 concurrent sessions hold the stream", won.Load())
	}
}

// TestRunnerReceipts: with RequireReceipt, only a dispatch whose receipt
// proves these exact bytes are in the authority log this runner verified
// is admitted.
func TestRunnerReceipts(t *testing.T) {
	l := newRunnerLedger(t)
	raw := l.signed(t, 1, nil)
	at := l.append(t, raw)
	atSize := l.receipt(t, at)
	l.append(t, l.signed(t, 2, nil)) // the log grows past the receipt's tree
	require := func(c *verify.Config) { c.RequireReceipt = true }
	l.admitIn(t, verify.Trust{}, require, verify.Dispatch{Raw: l.signed(t, 3, nil)}, rules.ReceiptMissing, refusedAll)
	// A receipt for other bytes, and one from a log forked under the same key.
	other := l.receipt(t, at+1)
	l.admitIn(t, verify.Trust{}, require, verify.Dispatch{Raw: raw, Receipt: other}, rules.ReceiptInvalid, refusedAll)
	// An empty receipt is a receipt given, and fails, required or not.
	l.admitIn(t, verify.Trust{}, require, verify.Dispatch{Raw: raw, ReceiptGiven: true}, rules.ReceiptInvalid, refusedAll)
	l.admitIn(t, verify.Trust{}, nil, verify.Dispatch{Raw: raw, Receipt: []byte{}, ReceiptGiven: true}, rules.ReceiptInvalid, refusedAll)
	fork := newRunnerLedger(t)
	fork.logKey = l.logKey
	forkDir := t.TempDir()
	forked := createAuthority(t, filepath.Join(forkDir, ledgerdir.AuthorityDir), runnerOrigin, l.logKey, nil)
	forked.Append([][]byte{raw})
	forkReceipt, err := forked.Receipt(0)
	forked.Close()
	if err != nil {
		t.Fatal(err)
	}
	l.admitIn(t, verify.Trust{}, require, verify.Dispatch{Raw: raw, Receipt: forkReceipt}, rules.ReceiptInvalid, refusedAll)
	// The genuine receipt, for a tree smaller than the verified one.
	r := l.open(t, verify.ModeEnforce, verify.Trust{}, require)
	v, _, err := r.Admit(verify.Dispatch{Raw: raw, Receipt: atSize, AgentBinary: agentPath})
	if err != nil || v.Verdict != verify.Admitted || !contains(v.Passed, "receipt") {
		t.Fatalf("genuine receipt: %v %s/%s %s", err, v.Verdict, v.Rule, v.Reason)
	}
	// A receipt over a tree this runner has not verified yet cannot be
	// checked: a log key holder could have signed any root for it.
	beyond := l.signed(t, 5, nil)
	r.Close()
	i := l.append(t, beyond)
	rcpt := l.receipt(t, i)
	l.append(t, l.signed(t, 6, nil))
	r = l.open(t, verify.ModeEnforce, verify.Trust{}, require)
	if v, _, _ := r.Admit(verify.Dispatch{Raw: beyond, Receipt: rcpt, AgentBinary: agentPath}); v.Verdict != verify.Admitted {
		t.Fatalf("receipt below the verified size: %s/%s %s", v.Verdict, v.Rule, v.Reason)
	}
}

// TestRunnerLedgerRules: a tampered authority log, a log that does not
// extend the one the runner trusted, a root and a checkpoint key this
// runner does not trust refuse in every mode, and are recorded.
func TestRunnerLedgerRules(t *testing.T) {
	l := newRunnerLedger(t)
	r := l.open(t, verify.ModeOff, verify.Trust{}, nil)
	if v, _, err := r.Admit(verify.Dispatch{Raw: l.signed(t, 1, nil), AgentBinary: agentPath}); err != nil || v.Verdict != verify.Admitted {
		t.Fatalf("%v %+v", err, v)
	}
	r.Close()
	l.admitIn(t, verify.Trust{TrustRoot: "sha256:" + strings.Repeat("0", 64)}, nil, verify.Dispatch{Raw: l.signed(t, 2, nil)}, rules.RootUntrusted, refusedAll)
	// A --vkey of another key (the same origin) than the log's.
	other, err := formats.VerifierKey(runnerOrigin, testkit.Key(t, 99).Public())
	if err != nil {
		t.Fatal(err)
	}
	l.admitIn(t, verify.Trust{VKey: testLogKey(t, other)}, nil, verify.Dispatch{Raw: l.signed(t, 2, nil)}, rules.VKeyMismatch, refusedAll)

	// A fork: the same origin and key, another history of the same size.
	os.RemoveAll(filepath.Join(l.dir, ledgerdir.AuthorityDir))
	createAuthority(t, filepath.Join(l.dir, ledgerdir.AuthorityDir), runnerOrigin, l.logKey, nil).Close()
	l.append(t, l.baseEntries(t, 29*24*time.Hour)...)
	l.admitIn(t, verify.Trust{}, nil, verify.Dispatch{Raw: l.signed(t, 3, nil)}, rules.LedgerInconsistent, refusedAll)

	// One stored entry changed on disk.
	m := newRunnerLedger(t)
	if err := testkit.FlipStoredEntry(filepath.Join(m.dir, ledgerdir.AuthorityDir), 1); err != nil {
		t.Fatal(err)
	}
	m.admitIn(t, verify.Trust{}, nil, verify.Dispatch{Raw: m.signed(t, 1, nil)}, rules.LedgerUnverified, refusedAll)
}

// TestRunnerReloadsAuthority: a revocation appended while the runner is
// open is in force for the next admission.
func TestRunnerReloadsAuthority(t *testing.T) {
	l := newRunnerLedger(t)
	r := l.open(t, verify.ModeEnforce, verify.Trust{}, nil)
	if v, _, _ := r.Admit(verify.Dispatch{Raw: l.signed(t, 1, nil), AgentBinary: agentPath}); v.Verdict != verify.Admitted {
		t.Fatalf("%s/%s %s", v.Verdict, v.Rule, v.Reason)
	}
	rev := &schemas.Revocation{V: 1, Target: l.op.Public().ID(), Reason: "compromised", IssuedAt: testkit.Epoch.Add(-time.Second).Unix()}
	// The revocation lands while another process still holds the log:
	// the runner cannot read it, and refuses rather than decide on what
	// it read before.
	holder, err := ledger.Open(filepath.Join(l.dir, ledgerdir.AuthorityDir), l.logKey)
	if err == nil {
		holder.Now = l.now
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Append([][]byte{testkit.Seal(t, rev, l.root)}); err != nil {
		t.Fatal(err)
	}
	v, _, _ := r.Admit(verify.Dispatch{Raw: l.signed(t, 2, nil), AgentBinary: agentPath})
	if v.Verdict != verify.Refused || v.Rule != rules.LedgerUnverified || !strings.Contains(v.Reason, "another process still holds it") {
		t.Fatalf("while the changed log is held: %s/%s %s", v.Verdict, v.Rule, v.Reason)
	}
	// Admissions arriving meanwhile do not each wait again: eight at once
	// are refused together, not one after another (which would take 12 s).
	start := time.Now()
	var wg sync.WaitGroup
	for n := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, _, _ := r.Admit(verify.Dispatch{Raw: l.signed(t, 100+n, nil), AgentBinary: agentPath}); v.Rule != rules.LedgerUnverified {
				t.Errorf("while held: %s/%s", v.Verdict, v.Rule)
			}
		}()
	}
	wg.Wait()
	if d := time.Since(start); d > 6*time.Second {
		t.Fatalf("8 admissions while the log was held took %s: they waited one after another", d)
	}
	holder.Close()
	v, _, _ = r.Admit(verify.Dispatch{Raw: l.signed(t, 2, nil), AgentBinary: agentPath})
	if v.Verdict != verify.Refused || v.Rule != rules.Revoked || v.AuthoritySize != 6 {
		t.Fatalf("after a revocation: %s/%s (authority size %d) %s", v.Verdict, v.Rule, v.AuthoritySize, v.Reason)
	}
	r.Close()
	l.admitEach(t, verify.Trust{}, nil, [3]verify.Dispatch{{Raw: l.signed(t, 3, nil)}, {Raw: l.signed(t, 4, nil)}, {Raw: l.signed(t, 5, nil)}}, rules.Revoked, unsignedish)
}

// TestRunnerTightens: a rule listed in AlwaysRefuse refuses in every
// mode; the list cannot name what is not a rule, nor ok.
func TestRunnerTightens(t *testing.T) {
	l := newRunnerLedger(t)
	refuse, err := verify.ParseRefuse([]string{rules.Unsigned})
	if err != nil {
		t.Fatal(err)
	}
	l.admitIn(t, verify.Trust{}, func(c *verify.Config) { c.AlwaysRefuse = refuse },
		verify.Dispatch{Raw: bare(t, testkit.Instruction(fmt.Sprintf("%032x", 1)))}, rules.Unsigned, refusedAll)
	for bad, want := range map[string]string{
		"ok":       `"ok" is the rule of a verdict with no failure`,
		"unsgined": `"unsgined" is not a rule id (see writ admit --rules)`,
		"":         `"" is not a rule id`,
	} {
		if _, err := verify.ParseRefuse([]string{bad}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRefuse(%q) = %v, want %q", bad, err, want)
		}
	}
}

// TestRunnerFailsClosed: a panic in the verdict path (here the clock) is
// a refusal under internal-error in every mode, and it is recorded.
func TestRunnerFailsClosed(t *testing.T) {
	l := newRunnerLedger(t)
	l.admitIn(t, verify.Trust{}, func(c *verify.Config) { c.Now = func() time.Time { panic("clock failed") } },
		verify.Dispatch{Raw: l.signed(t, 1, nil)}, rules.Internal, refusedAll)
}

// TestRunnerClaimOfRevokedKey: a claim stops holding the stream when its
// signer's key is revoked: a compromised key cannot lock streams that its
// revocation does not free.
func TestRunnerClaimOfRevokedKey(t *testing.T) {
	l := newRunnerLedger(t)
	r := l.open(t, verify.ModeEnforce, verify.Trust{}, nil)
	until := testkit.Epoch.Add(24 * time.Hour).Unix()
	if v := l.admitBy(t, r, l.op2, 1, func(i *schemas.Instruction) { i.Claim = &schemas.Claim{Session: "evil", Until: until} }); v.Verdict != verify.Admitted {
		t.Fatalf("claim: %s/%s %s", v.Verdict, v.Rule, v.Reason)
	}
	if v := l.admitBy(t, r, l.op, 2, func(*schemas.Instruction) {}); v.Rule != rules.WorkClaimed {
		t.Fatalf("while the claim holds: %s/%s", v.Verdict, v.Rule)
	}
	rev := &schemas.Revocation{V: 1, Target: l.op2.Public().ID(), Reason: "compromised", IssuedAt: testkit.Epoch.Add(-time.Second).Unix()}
	l.append(t, testkit.Seal(t, rev, l.root))
	v := l.admitBy(t, r, l.op, 3, func(*schemas.Instruction) {})
	if v.Verdict != verify.Admitted || !contains(v.Passed, "work-claim-holder-lost-authority") {
		t.Fatalf("after the holder's revocation: %s/%s %s %v", v.Verdict, v.Rule, v.Reason, v.Passed)
	}
}
