package verify_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/internal/testkit/statequery"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/stateview"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
)

// fullReplay is the reference: a fresh state applying every entry of l in
// order at the time l accepted it (ledger.Log.Verify), with the entries
// it marks.
func fullReplay(t testing.TB, l *ledger.Log) (*delegation.State, *verify.StateMarks) {
	t.Helper()
	st, marks := delegation.NewState(), &verify.StateMarks{}
	_, err := l.Verify(nil, func(i int64, e []byte, at time.Time) error {
		a, err := st.Apply(bytes.Clone(e), at)
		if err != nil {
			return err
		}
		marks.Applied(a)
		return nil
	})
	if err != nil {
		t.Fatalf("full replay: %v", err)
	}
	return st, marks
}

// sameAnswers fails t when got does not answer every question of u as
// want does.
func sameAnswers(t testing.TB, what string, got, want *delegation.State, u statequery.Universe) {
	t.Helper()
	if d := statequery.Diff(statequery.Answers(got, u), statequery.Answers(want, u)); d != "" {
		t.Fatalf("%s: the state differs from the full replay's (got, then the replay's): %s", what, d)
	}
}

// diffCoverage counts what the sequences exercised: each label accepted
// and each rule refused, over every seed.
type diffCoverage struct {
	mu       sync.Mutex
	accepted map[string]int
	refused  map[string]int
}

func (c *diffCoverage) note(label string, err error, raw bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var re *delegation.RecordError
	switch {
	case err == nil && raw:
		c.accepted["raw append"]++
		fallthrough
	case err == nil:
		c.accepted[label]++
	case errors.As(err, &re):
		c.refused[re.Rule]++
		c.refused[label+" by "+re.Rule]++
	}
}

// check fails t unless the sequences accepted every kind of act and
// refused by every rule the generator aims at: a generator that drifted
// into refusing everything (or nothing) would prove little.
func (c *diffCoverage) check(t *testing.T) {
	for _, l := range []string{"root", "rotation", "delegation", "subdelegation", "revoke-key", "revoke-record", "revoke-retired",
		"pin", "quarantine", "lift", "downgrade", "issuer", "instruction", "raw append", "batch"} {
		if c.accepted[l] == 0 {
			t.Errorf("no %s was accepted in any sequence", l)
		}
	}
	if c.accepted["quarantine-by-delegate"]+c.accepted["lift-by-delegate"] == 0 {
		t.Errorf("no delegate's quarantine or lift was accepted in any sequence")
	}
	for _, r := range []string{delegation.RuleDuplicate, delegation.RuleUnknownKey, delegation.RuleThreshold, delegation.RuleNotAttenuated,
		delegation.RuleRevoked, delegation.RuleRootKey, delegation.RuleUnknownTarget, delegation.RuleIssuedAt, delegation.RuleRootVersion,
		delegation.RuleSuperseded, delegation.RuleOutsideWindow, delegation.RuleMalformed, delegation.RuleRootExpired, delegation.RuleOutOfScope,
		delegation.RuleNoDelegation} {
		if c.refused[r] == 0 {
			t.Errorf("no record was refused by rule %s in any sequence", r)
		}
	}
	var lines []string
	for k, n := range c.accepted {
		lines = append(lines, fmt.Sprintf("accepted %s: %d", k, n))
	}
	for k, n := range c.refused {
		lines = append(lines, fmt.Sprintf("refused %s: %d", k, n))
	}
	sort.Strings(lines)
	t.Log(strings.Join(lines, "\n"))
}

// TestStateDifferential runs seeded random sequences of authority acts,
// each valid or deliberately not, one act per open of the log: each step
// loads the authority by extending the persisted state
// (verify.LoadAuthority, which must not fall back to a full replay after
// the first step), appends one record, and closes. After every step the
// verdict (accepted, or refused by the exact rule, index and reason) is
// the one a reference full replay gives the same record at the same
// accepted time, and the loaded, the appended-to and a read-only loaded
// state answer every question of the public API as the reference does.
// Some accepted records are appended without the gate (as a replica's
// sync writes them), leaving the binding behind for the next load to
// extend. At the end the persisted index matches a full replay
// (verify.CheckStateIndex).
func TestStateDifferential(t *testing.T) {
	cov := &diffCoverage{accepted: map[string]int{}, refused: map[string]int{}}
	t.Run("seeds", func(t *testing.T) {
		for seed := range diffSeeds() {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				t.Parallel() // most of a step is Badger's open and fsync
				runDiffSeed(t, seed, diffSteps(), cov)
			})
		}
	})
	if !t.Failed() {
		cov.check(t)
	}
}

// diffSeeds and diffSteps are 8 sequences of 40 acts by default;
// WRIT_STATEDIFF_SEEDS and WRIT_STATEDIFF_STEPS run more.
func diffSeeds() uint64 { return uint64(envCount("WRIT_STATEDIFF_SEEDS", 8)) }

func diffSteps() int { return envCount("WRIT_STATEDIFF_STEPS", 40) }

func envCount(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func runDiffSeed(t *testing.T, seed uint64, steps int, cov *diffCoverage) {
	dir := filepath.Join(t.TempDir(), "authority")
	w := newDiffWorld(t, seed)
	key := testkit.Key(t, 200)
	createAuthority(t, dir, "example.com/diff", key, w.clock).Close()
	for step := range steps {
		w.advance()
		diffStep(t, w, dir, key, step, cov)
	}
	// A last load for writing extends the index past any entry appended
	// without the gate.
	l, err := ledger.Open(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if a, err := verify.LoadAuthority(l, nil); err != nil {
		t.Fatalf("the last load: %v", err)
	} else if a.Replayed != "" {
		t.Fatalf("the last load replayed: %s", a.Replayed)
	}
	ref, marks := fullReplay(t, l)
	if err := verify.CheckStateIndex(l, ref, marks.Marks); err != nil {
		t.Fatalf("the persisted index after %d steps: %v", steps, err)
	}
	if b, ok, err := stateview.NewIndex(l).Binding(); err != nil || !ok || b.Size != l.Size() {
		t.Fatalf("binding %+v (%v, %v), want one at the log's size %d", b, ok, err, l.Size())
	}
}

// diffStep is one step: load, compare, append one record, compare, and
// (every fourth step, and after an append without the gate) load
// read-only and compare again.
func diffStep(t *testing.T, w *diffWorld, dir string, key *sign.PrivateKey, step int, cov *diffCoverage) {
	l, err := ledger.Open(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	l.Now = w.clock
	a, err := verify.LoadAuthority(l, nil)
	if err != nil {
		l.Close()
		t.Fatalf("step %d: load: %v", step, err)
	}
	defer l.Close()
	if step > 0 && a.Replayed != "" {
		t.Fatalf("step %d: the persisted state was not used: %s", step, a.Replayed)
	}
	ref, _ := fullReplay(t, l)
	sameAnswers(t, fmt.Sprintf("step %d, loaded", step), a.State, ref, w.universe())
	entries, label := w.nextBatch(step)
	wants, wantErr := refApply(ref, entries, w.now)
	raw := wantErr == nil && len(entries) == 1 && step > 0 && w.rng.IntN(6) == 0
	if raw {
		l.Close()
		rawAppend(t, dir, key, w.clock, entries[0])
	} else {
		got, err := a.Append(entries)
		sameVerdict(t, fmt.Sprintf("step %d (%s)", step, label), wants, wantErr, got, err)
	}
	cov.note(label, wantErr, raw)
	for i, want := range wants {
		w.accept(entries[i], want)
	}
	if !raw {
		sameAnswers(t, fmt.Sprintf("step %d (%s), appended", step, label), a.State, ref, w.universe())
		l.Close()
	}
	if raw || step%4 == 3 {
		diffReadOnly(t, w, dir, ref, fmt.Sprintf("step %d (%s), read-only", step, label))
	}
}

// diffReadOnly loads the log in dir read-only, by extending its persisted
// state, and compares the state with ref.
func diffReadOnly(t *testing.T, w *diffWorld, dir string, ref *delegation.State, what string) {
	ro, err := ledger.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ra, err := verify.LoadAuthority(ro, nil)
	if err != nil {
		t.Fatalf("%s: load: %v", what, err)
	}
	if ra.Replayed != "" {
		t.Fatalf("%s: the persisted state was not used: %s", what, ra.Replayed)
	}
	sameAnswers(t, what, ra.State, ref, w.universe())
}

// rawAppend appends entry to the log in dir without the authority gate,
// as a writer that does not keep the state index does: the binding stays
// where it was.
func rawAppend(t *testing.T, dir string, key *sign.PrivateKey, clock func() time.Time, entry []byte) {
	t.Helper()
	l, err := ledger.Open(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Now = clock
	before, _, err := stateview.NewIndex(l).Binding()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append([][]byte{entry}); err != nil {
		t.Fatal(err)
	}
	if after, _, err := stateview.NewIndex(l).Binding(); err != nil || after != before {
		t.Fatalf("an append without the gate moved the binding from %+v to %+v (%v)", before, after, err)
	}
}

// refApply applies entries to ref in order at the same accepted time, all
// or none (as one append call): the records applied, or the first
// refusal with ref as it was.
func refApply(ref *delegation.State, entries [][]byte, at time.Time) ([]*delegation.Applied, error) {
	mark := ref.Mark()
	defer ref.Settle()
	var out []*delegation.Applied
	for _, e := range entries {
		a, err := ref.Apply(e, at)
		if err != nil {
			ref.Reset(mark)
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// sameVerdict fails t unless Append's result (got, err) is the
// reference's (wants, wantErr): the same entries accepted at the same
// time, or the same refusal (rule, index and reason).
func sameVerdict(t *testing.T, what string, wants []*delegation.Applied, wantErr error, got []*delegation.Applied, err error) {
	t.Helper()
	var re, wre *delegation.RecordError
	switch {
	case wantErr == nil && err == nil:
		if len(got) != len(wants) {
			t.Fatalf("%s: appended %d records, the replay applies %d", what, len(got), len(wants))
		}
		for i, g := range got {
			want := wants[i]
			if g.Index != want.Index || g.Kind != want.Kind || g.Digest != want.Digest || g.Content != want.Content ||
				!g.Accepted.Equal(want.Accepted) || !slices.EqualFunc(g.Signers, want.Signers, sign.PublicKey.Equal) {
				t.Fatalf("%s: appended %+v, the replay applies %+v", what, g, want)
			}
		}
	case wantErr != nil && err != nil && errors.As(err, &re) && errors.As(wantErr, &wre):
		if re.Rule != wre.Rule || re.Index != wre.Index || re.Error() != wre.Error() {
			t.Fatalf("%s: refused as %q (rule %s), the replay refuses it as %q (rule %s)", what, re, re.Rule, wre, wre.Rule)
		}
	default:
		t.Fatalf("%s: append: %v; the replay: %v", what, err, wantErr)
	}
}
