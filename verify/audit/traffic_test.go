package audit_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/audit"
)

// TestAuditTrafficCounts: the report's counts on a small fixed ledger,
// against values computed by hand.
func TestAuditTrafficCounts(t *testing.T) {
	l := newRunnerLedger(t)
	day2 := func(i *schemas.Instruction) {
		at := testkit.Epoch.Add(15 * time.Hour) // 01:00 the next day, inside the delegations
		i.IssuedAt, i.NotBefore, i.Expires = at.Unix(), at.Unix(), at.Add(time.Hour).Unix()
	}
	unsigned := func(n int, edit func(*schemas.Instruction)) []byte {
		i := testkit.Instruction(fmt.Sprintf("%032x", n))
		if edit != nil {
			edit(i)
		}
		return bare(t, i)
	}
	steps := []struct {
		mode    verify.Mode
		clock   int64 // seconds after Epoch
		raw     []byte
		verdict schemas.Verdict
	}{
		{verify.ModeEnforce, 0, l.signed(t, 1, nil), verify.Admitted},
		{verify.ModeOff, 0, unsigned(2, nil), verify.AdmittedUnsigned},
		{verify.ModeWarn, 0, unsigned(3, nil), verify.WouldRefuse},
		{verify.ModeEnforce, 0, unsigned(4, nil), verify.Refused},
		{verify.ModeEnforce, 0, l.signed(t, 5, func(i *schemas.Instruction) { i.Machine = "runner-2" }), verify.Refused},
		{verify.ModeOff, 15 * 3600, l.signed(t, 6, day2), verify.Admitted},
		{verify.ModeOff, 15 * 3600, unsigned(7, day2), verify.AdmittedUnsigned},
		// Three days later, after a day without decisions.
		{verify.ModeOff, 75 * 3600, unsigned(8, func(i *schemas.Instruction) {
			at := testkit.Epoch.Add(75 * time.Hour)
			i.IssuedAt, i.NotBefore, i.Expires = at.Unix(), at.Unix(), at.Add(time.Hour).Unix()
		}), verify.AdmittedUnsigned},
	}
	for n, s := range steps {
		l.clock.Store(s.clock)
		r := l.open(t, s.mode, verify.Trust{}, nil)
		v, _, err := r.Admit(verify.Dispatch{Raw: s.raw, AgentBinary: agentPath})
		r.Close()
		if err != nil || v.Verdict != s.verdict {
			t.Fatalf("step %d: %v %s/%s, want %s", n+1, err, v.Verdict, v.Rule, s.verdict)
		}
	}
	rev := &schemas.Revocation{V: 1, Target: l.op2.Public().ID(), Reason: "left", IssuedAt: testkit.Epoch.Add(75*time.Hour - time.Second).Unix()}
	l.append(t, testkit.Seal(t, rev, l.root))

	now := func() time.Time { return testkit.Epoch.Add(96 * time.Hour) }
	var done, total int64
	rep, err := audit.Run(audit.Dir(l.dir), audit.Options{Now: now, Progress: func(d, t int64) { done, total = d, t }})
	if err != nil || !rep.OK {
		t.Fatalf("audit: %v %+v", err, rep.Failure)
	}
	tr := rep.Traffic
	op := l.op.Public().ID()
	check := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("decisions", rep.Decisions, 8)
	check("progress at the end", fmt.Sprint(done, "/", total), "14/14")
	check("by verdict", rep.ByVerdict, map[string]int64{"admitted": 2, "admitted-unsigned": 3, "would-refuse": 1, "refused": 2})
	check("by rule", rep.ByRule, map[string]int64{"ok": 2, "unsigned": 5, "wrong-machine": 1})
	check("unsigned", tr.Unsigned, 5)
	check("unsigned share", fmt.Sprintf("%.4f", tr.UnsignedShare), "0.6250")
	check("by mode", tr.ByMode, map[string]int64{"enforce": 3, "off": 4, "warn": 1})
	check("by signer", tr.BySigner, map[string]int64{op: 3, "none": 5})
	check("by stream", tr.ByStream, map[string]int64{"demo": 8})
	check("by machine", tr.ByMachine, map[string]int64{"runner-1": 8})
	check("would refuse", rep.WouldRefuse, 4)
	check("would refuse by rule", tr.WouldRefuseByRule, map[string]int64{"unsigned": 4})
	// Per day, the verdicts add up to the decisions, and to the report's
	// totals over the days.
	check("days", tr.Days, []audit.DayCount{
		{Day: "2026-11-29", Decisions: 5, Unsigned: 3, Refused: 2, WouldRefuse: 2, ByVerdict: audit.VerdictCounts{Admitted: 1, AdmittedUnsigned: 1, WouldRefuse: 1, Refused: 2}},
		{Day: "2026-11-30", Decisions: 2, Unsigned: 1, Refused: 0, WouldRefuse: 1, ByVerdict: audit.VerdictCounts{Admitted: 1, AdmittedUnsigned: 1}},
		{Day: "2026-12-01"},
		{Day: "2026-12-02", Decisions: 1, Unsigned: 1, WouldRefuse: 1, ByVerdict: audit.VerdictCounts{AdmittedUnsigned: 1}},
		{Day: "2026-12-03", Partial: true}}) // the audit's day, to its clock: the end of the open period
	// The three delegations end a day after Epoch, before the audit's
	// clock; op2 was revoked when the ledger accepted the revocation,
	// 75 hours after Epoch (its issued_at, a second earlier, is the
	// signer's claim).
	var events []string
	for _, e := range tr.AuthorityEvents {
		events = append(events, fmt.Sprintf("%d %s %s", e.Index, e.Kind, e.Time))
	}
	check("authority events", events, []string{"1 delegation-expired 2026-11-30T10:00:00Z", "2 delegation-expired 2026-11-30T10:00:00Z",
		"3 delegation-expired 2026-11-30T10:00:00Z", "5 revocation 2026-12-02T13:00:00Z"})

	// A period: only the second day is counted; all is still verified.
	rep, err = audit.Run(audit.Dir(l.dir), audit.Options{Now: now, Since: testkit.Epoch.Add(12 * time.Hour)})
	if err != nil || !rep.OK {
		t.Fatalf("audit since: %v %+v", err, rep.Failure)
	}
	check("decisions since", rep.Decisions, 3)
	check("outside the period", rep.Traffic.OutsidePeriod, 5)
	check("unsigned since", rep.Traffic.Unsigned, 2)
	check("events since", len(rep.Traffic.AuthorityEvents), 4)
	check("entries verified", rep.EntriesVerified, 6+8)

	// Fractions of a second in the bounds: the first day's decisions are
	// at Epoch exactly, so half a second after it leaves them out, and an
	// until half a second after it keeps them.
	for _, tc := range []struct {
		since, until time.Time
		want         int64
	}{
		{testkit.Epoch.Add(500 * time.Millisecond), time.Time{}, 3},
		{testkit.Epoch.Add(-500 * time.Millisecond), testkit.Epoch.Add(500 * time.Millisecond), 5},
		{testkit.Epoch, testkit.Epoch, 0},
	} {
		rep, err := audit.Run(audit.Dir(l.dir), audit.Options{Now: now, Since: tc.since, Until: tc.until})
		if err != nil || !rep.OK {
			t.Fatalf("audit: %v", err)
		}
		check(fmt.Sprintf("decisions in [%s, %s)", tc.since, tc.until), rep.Decisions, tc.want)
	}
}
