package formats

// Hostile review of the tlog-policy parser and quorum check: every test is
// an attack writ withstands (those marked "once an attack" succeeded before
// their fix).

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"golang.org/x/mod/sumdb/note"
)

// hostileCheckpoint signs the policy test body with the log key (its
// signed-note line and its own timestamped cosignature/v1 line at logAt)
// plus the extra signers.
func hostileCheckpoint(t *testing.T, logAt time.Time, extra ...note.Signer) []byte {
	t.Helper()
	logKey := testkit.Key(t, 1)
	s, _, err := NewNoteSigner(policyOrigin, logKey)
	if err != nil {
		t.Fatal(err)
	}
	signers := append([]note.Signer{s, NewCosigner(policyOrigin, logKey, logAt)}, extra...)
	out, err := note.Sign(&note.Note{Text: Checkpoint{Origin: policyOrigin, Size: 3, Hash: [32]byte{1}}.Body()}, signers...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// REGRESSION, once an attack (wrong-yes): a policy with no `log` line (the spec allows it; the
// runner then trusts --vkey or the ledger's key) whose witness key is the
// log's own cosignature/v1 key. ParsePolicy only refuses a witness key
// that a *listed* log holds, and Check never compares a witness's key
// with vkey's, so the log's own timestamp line meets the quorum and its
// writer-chosen time becomes the "witnessed" time.
func TestHostileWitnessLogOwnCosignatureCountsAsWitness(t *testing.T) {
	logKey := testkit.Key(t, 1)
	logVKey, _ := VerifierKey(policyOrigin, logKey.Public())
	asWitness, err := CosignerKey(policyOrigin, logKey.Public())
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePolicy([]byte("witness w " + asWitness + "\nquorum w\n"))
	if err != nil {
		return // refused at parse time: fixed
	}
	now := time.Unix(1_000_000, 0)
	signed := hostileCheckpoint(t, now) // no witness signed anything
	w, err := p.Check(signed, testLogKey(t, logVKey), now)
	if err == nil || w.Met {
		t.Fatalf("the log's own cosignature/v1 line met the quorum as witness w (witnessed time %s): Check = %+v, %v", w.Time, w, err)
	}
}

// REGRESSION, once an attack (wrong-yes, spec mismatch): c2sp.org/tlog-policy says "Each
// defined name can be listed as a group member at most once. This ensures
// that each witness can contribute to a group, or to the quorum in
// particular, in only one way." ParsePolicy only refuses a name listed
// twice in one group, so one witness in two groups satisfies both, and a
// quorum "all of two groups" is met by that single witness.
func TestHostileWitnessOneWitnessInTwoGroupsCountsTwice(t *testing.T) {
	logKey, lv, wk, wv := policyFixture(t)
	src := "log " + lv + "\nwitness w0 " + wv[0] + "\nwitness w1 " + wv[1] + "\nwitness w2 " + wv[2] + "\n" +
		"group orgA any w0 w1\ngroup orgB any w0 w2\ngroup both all orgA orgB\nquorum both\n"
	p, err := ParsePolicy([]byte(src))
	if err != nil {
		return // refused: fixed
	}
	signed := cosigned(t, logKey, wk, map[int]int64{0: 100}) // only w0
	w, err := p.Check(signed, testLogKey(t, lv), time.Unix(200, 0))
	if err == nil || w.Met {
		t.Fatalf("one witness (w0) met a quorum of two groups by being a member of both: %+v", w)
	}
}

// REGRESSION, once an attack (DoS): Policy.satisfied re-evaluates every member group
// recursively without memoizing, so a group that names all earlier
// groups doubles the work per line. A 3 kB policy of 40 such groups (the
// limit is 64) makes Check run ~2^39 evaluations: admit, sync, import,
// audit and verify-receipt under it never return.
func TestHostileWitnessNestedGroupsExponentialCheck(t *testing.T) {
	logKey, lv, wk, wv := policyFixture(t)
	var b strings.Builder
	b.WriteString("log " + lv + "\nwitness w0 " + wv[0] + "\ngroup g1 any w0\n")
	const depth = 40
	for i := 2; i <= depth; i++ {
		fmt.Fprintf(&b, "group g%d any", i)
		for j := 1; j < i; j++ {
			fmt.Fprintf(&b, " g%d", j)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "quorum g%d\n", depth)
	p, err := ParsePolicy([]byte(b.String()))
	if err != nil {
		return // refused: fixed
	}
	t.Logf("policy of %d bytes", b.Len())
	signed := cosigned(t, logKey, wk, map[int]int64{0: 100})
	done := make(chan error, 1)
	go func() {
		_, err := p.Check(signed, testLogKey(t, lv), time.Unix(200, 0))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Check = %v, want the quorum met", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("Check of a %d-byte policy with %d nested groups did not return in 5 s (exponential evaluation)", b.Len(), depth)
	}
}

// REGRESSION, once an attack (wrong-no): a witness with two valid cosignatures on the
// checkpoint, one dated now and one more than MaxCosignatureSkew ahead,
// is not counted at all: CosigVerifier.Time returns only the latest, and
// Check then files the witness under Future. The Witnessing doc says
// Future is for a witness "whose only valid cosignature" is in the future.
func TestHostileWitnessFutureLineHidesValidCosignature(t *testing.T) {
	_, lv, wk, wv := policyFixture(t)
	p, err := ParsePolicy([]byte("log " + lv + "\nwitness w0 " + wv[0] + "\nquorum w0\n"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_000_000, 0)
	signed := hostileCheckpoint(t, now,
		NewCosigner("witness.example/w0", wk[0], now.Add(-time.Minute)),
		NewCosigner("witness.example/w0", wk[0], now.Add(time.Hour)))
	w, err := p.Check(signed, testLogKey(t, lv), now)
	if err != nil || !w.Met || !w.Time.Equal(now.Add(-time.Minute)) {
		t.Fatalf("w0's valid cosignature (1 min ago) was not counted because it also signed one dated 1 h ahead: %+v, %v", w, err)
	}
}

// REGRESSION: cosignatures that must never count.
func TestHostileWitnessRegressionForgeries(t *testing.T) {
	logKey, lv, wk, wv := policyFixture(t)
	now := time.Unix(1_000_000, 0)
	p, err := ParsePolicy([]byte("log " + lv + "\nwitness w0 " + wv[0] + "\nwitness w1 " + wv[1] + "\ngroup q 2 w0 w1\nquorum q\n"))
	if err != nil {
		t.Fatal(err)
	}
	// The log key signs lines under both witnesses' names.
	forged := hostileCheckpoint(t, now,
		NewCosigner("witness.example/w0", logKey, now), NewCosigner("witness.example/w1", logKey, now))
	if w, err := p.Check(forged, testLogKey(t, lv), now); !errors.Is(err, ErrQuorum) || w.Met {
		t.Errorf("log-key lines under the witnesses' names met the quorum: %+v", w)
	}
	// w0 twice (same line duplicated, and a second time) is one witness.
	twice := hostileCheckpoint(t, now,
		NewCosigner("witness.example/w0", wk[0], now), NewCosigner("witness.example/w0", wk[0], now.Add(-time.Second)))
	if w, err := p.Check(twice, testLogKey(t, lv), now); !errors.Is(err, ErrQuorum) || w.Met {
		t.Errorf("two cosignatures by w0 met a 2-of-2 quorum: %+v", w)
	}
	// Cosignatures over another body (size 4) moved onto this checkpoint.
	other, err := note.Sign(&note.Note{Text: Checkpoint{Origin: policyOrigin, Size: 4, Hash: [32]byte{1}}.Body()},
		NewCosigner("witness.example/w0", wk[0], now), NewCosigner("witness.example/w1", wk[1], now))
	if err != nil {
		t.Fatal(err)
	}
	_, otherSigs, _ := strings.Cut(string(other), "\n\n")
	moved := append(hostileCheckpoint(t, now), otherSigs...)
	if w, err := p.Check(moved, testLogKey(t, lv), now); !errors.Is(err, ErrQuorum) || w.Met {
		t.Errorf("cosignatures of another checkpoint body counted: %+v", w)
	}
	// Future-dated cosignatures do not count, and one just inside the skew
	// does not lift the witnessed time above the other witness's.
	fut := hostileCheckpoint(t, now,
		NewCosigner("witness.example/w0", wk[0], now.Add(MaxCosignatureSkew+time.Second)), NewCosigner("witness.example/w1", wk[1], now))
	if w, err := p.Check(fut, testLogKey(t, lv), now); !errors.Is(err, ErrQuorum) || w.Met || len(w.Future) != 1 {
		t.Errorf("a cosignature dated beyond the skew counted: %+v", w)
	}
	mixed := hostileCheckpoint(t, now,
		NewCosigner("witness.example/w0", wk[0], now.Add(4*time.Minute)), NewCosigner("witness.example/w1", wk[1], now.Add(-time.Hour)))
	if w, err := p.Check(mixed, testLogKey(t, lv), now); err != nil || !w.Time.Equal(now.Add(-time.Hour)) {
		t.Errorf("witnessed time = %s, %v; want the older witness's (%s)", w.Time, err, now.Add(-time.Hour))
	}
	// A witness key renamed to the log's origin, with a log line: refused.
	asWitness, _ := CosignerKey(policyOrigin, logKey.Public())
	if _, err := ParsePolicy([]byte("log " + lv + "\nwitness w " + asWitness + "\nquorum w\n")); !errors.Is(err, ErrPolicy) {
		t.Errorf("the log's own key as a witness beside its log line parsed: %v", err)
	}
	// A policy for another log.
	otherLog, _ := VerifierKey("example.com/other", testkit.Key(t, 2).Public())
	if _, err := p.Check(cosigned(t, logKey, wk, map[int]int64{0: 1, 1: 1}), testLogKey(t, otherLog), now); !errors.Is(err, ErrPolicyLog) {
		t.Errorf("a checkpoint of a log the policy does not list: %v", err)
	}
}
