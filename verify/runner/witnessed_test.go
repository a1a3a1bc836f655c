package runner_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
	"golang.org/x/mod/sumdb/note"
)

// cosignLine returns the cosignature/v1 line a witness named name with key
// makes at time at over the body of the signed checkpoint head.
func cosignLine(t *testing.T, head []byte, name string, key *sign.PrivateKey, at time.Time) string {
	t.Helper()
	body, _, _ := bytes.Cut(head, []byte("\n\n"))
	n, err := note.Sign(&note.Note{Text: string(body) + "\n"}, formats.NewCosigner(name, key, at))
	if err != nil {
		t.Fatal(err)
	}
	_, line, _ := bytes.Cut(n, []byte("\n\n"))
	return string(line)
}

// attach stores witness cosignatures with the authority log's latest
// checkpoint, as the writer does after collecting them.
func (l *runnerLedger) attach(t *testing.T, lines ...func(head []byte) string) {
	t.Helper()
	auth := openAuthority(t, filepath.Join(l.dir, ledgerdir.AuthorityDir), l.logKey, l.now)
	defer auth.Close()
	head, err := auth.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	var ls []string
	for _, f := range lines {
		ls = append(ls, f(head))
	}
	if _, err := auth.AttachCosignatures(head, ls); err != nil {
		t.Fatal(err)
	}
}

// TestRunnerWitnessPolicy: under a policy whose quorum is two witnesses,
// a runner refuses in every mode (ledger-unwitnessed) until both
// cosigned the authority log's latest checkpoint, says which cosigned
// and which are missing, and judges the ledger's age by the time the
// quorum cosigned, not the writer's.
func TestRunnerWitnessPolicy(t *testing.T) {
	l := newRunnerLedger(t)
	wa, wb := testkit.Key(t, 60), testkit.Key(t, 61)
	va, _ := formats.CosignerKey("witness.example/a", wa.Public())
	vb, _ := formats.CosignerKey("witness.example/b", wb.Public())
	auth, err := ledger.OpenReadOnly(filepath.Join(l.dir, ledgerdir.AuthorityDir))
	if err != nil {
		t.Fatal(err)
	}
	vkey := auth.VerifierKey()
	auth.Close()
	p, err := formats.ParsePolicy([]byte("log " + vkey + "\nwitness a " + va + "\nwitness b " + vb + "\ngroup q all a b\nquorum q\n"))
	if err != nil {
		t.Fatal(err)
	}
	trust := verify.Trust{Policy: p}
	byA := func(at time.Time) func([]byte) string {
		return func(h []byte) string { return cosignLine(t, h, "witness.example/a", wa, at) }
	}
	byB := func(at time.Time) func([]byte) string {
		return func(h []byte) string { return cosignLine(t, h, "witness.example/b", wb, at) }
	}

	l.admitIn(t, trust, nil, verify.Dispatch{Raw: l.signed(t, 1, nil)}, rules.LedgerUnwitnessed, refusedAll)
	l.attach(t, byA(testkit.Epoch))
	r := l.open(t, verify.ModeOff, trust, nil)
	v, _, err := r.Admit(verify.Dispatch{Raw: l.signed(t, 2, nil), AgentBinary: agentPath})
	r.Close()
	if err != nil || v.Rule != rules.LedgerUnwitnessed || v.Verdict != verify.Refused ||
		!strings.Contains(v.Reason, "quorum group q: 2 of [a b]; cosigned by [a]; missing [b]") {
		t.Fatalf("one cosignature: %v %s/%s %q", err, v.Verdict, v.Rule, v.Reason)
	}

	// Both witnesses, two hours before the runner's clock; the writer
	// signed just now. Under a one-hour limit the witnessed time is stale.
	l.clock.Store(30 * 60)
	l.append(t, l.signed(t, 3, nil))
	l.attach(t, byA(testkit.Epoch.Add(-90*time.Minute)), byB(testkit.Epoch.Add(-2*time.Hour)))
	age := func(c *verify.Config) { c.MaxLedgerAge = time.Hour }
	r = l.open(t, verify.ModeEnforce, trust, age)
	v, _, err = r.Admit(verify.Dispatch{Raw: l.signed(t, 4, nil), AgentBinary: agentPath})
	r.Close()
	if err != nil || v.Rule != rules.StaleLedger || !strings.Contains(v.Reason, "cosigned by the witness quorum at") {
		t.Fatalf("witnessed time: %v %s/%s %q", err, v.Verdict, v.Rule, v.Reason)
	}
	// Without the policy the writer's own time says fresh.
	r = l.open(t, verify.ModeEnforce, verify.Trust{}, age)
	if v, _, err = r.Admit(verify.Dispatch{Raw: l.signed(t, 5, nil), AgentBinary: agentPath}); err != nil || v.Verdict != verify.Admitted {
		t.Fatalf("writer's time: %v %s/%s %q", err, v.Verdict, v.Rule, v.Reason)
	}
	r.Close()
	// Fresh cosignatures: admitted under the policy.
	l.attach(t, byA(l.now()), byB(l.now().Add(-time.Minute)))
	r = l.open(t, verify.ModeEnforce, trust, age)
	if v, _, err = r.Admit(verify.Dispatch{Raw: l.signed(t, 6, nil), AgentBinary: agentPath}); err != nil || v.Verdict != verify.Admitted {
		t.Fatalf("witnessed: %v %s/%s %q", err, v.Verdict, v.Rule, v.Reason)
	}
	r.Close()
}
