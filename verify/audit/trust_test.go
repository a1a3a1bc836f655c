package audit_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/verify/audit"
)

// TestAuditTrustSources: the report says which key each log was checked
// with and where it came from (the ledger itself, the caller, the state
// file), and is independent only when no key came from the ledger.
func TestAuditTrustSources(t *testing.T) {
	logKey, runnerKey := testkit.Key(t, 50), testkit.Key(t, 51)
	dir := auditLedger(t, logKey, runnerKey, "")
	state := filepath.Join(t.TempDir(), "auditor.json")
	src := func(rep *audit.Report) string {
		t.Helper()
		tr := rep.Trust
		if tr == nil || tr.Authority == nil || tr.Decisions == nil {
			t.Fatalf("no trust in the report: %+v", tr)
		}
		if tr.Authority.Name != "example.com/audit" || tr.Authority.KeyID != logKey.Public().ID() || tr.Decisions.KeyID != runnerKey.Public().ID() {
			t.Errorf("keys: %+v %+v", tr.Authority, tr.Decisions)
		}
		if tr.FirstRoot == "" || tr.FirstRoot[:7] != "sha256:" {
			t.Errorf("first root %q", tr.FirstRoot)
		}
		ind := "dependent"
		if tr.Independent {
			ind = "independent"
		}
		return tr.Authority.Source + "/" + tr.Decisions.Source + " " + ind
	}
	now := func() time.Time { return testkit.Epoch.Add(90 * time.Minute) }
	rep, err := audit.Run(audit.Dir(dir), audit.Options{StateFile: state, Now: now})
	if err != nil || !rep.OK {
		t.Fatalf("audit: %v %+v", err, rep.Failure)
	}
	if got := src(rep); got != "ledger/ledger dependent" {
		t.Errorf("first audit: %s", got)
	}
	if rep.AuditedAt != "2026-11-29T11:30:00Z" || rep.Trust.TrustRoot != "" {
		t.Errorf("audited at %q, trust root %q", rep.AuditedAt, rep.Trust.TrustRoot)
	}
	if rep, err = audit.Run(audit.Dir(dir), audit.Options{StateFile: state, Now: now}); err != nil || !rep.OK {
		t.Fatalf("audit: %v %+v", err, rep.Failure)
	}
	if got := src(rep); got != "state/state independent" {
		t.Errorf("with the state file: %s", got)
	}
	var st struct {
		A string `json:"authority_vkey"`
		D string `json:"decisions_vkey"`
	}
	b, _ := os.ReadFile(state)
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	first := rep.Trust.FirstRoot
	for _, tc := range []struct {
		o    audit.Options
		want string
	}{
		{audit.Options{AuthorityVKey: testLogKey(t, st.A), DecisionsVKey: testLogKey(t, st.D), TrustRoot: first}, "given/given independent"},
		{audit.Options{AuthorityVKey: testLogKey(t, st.A)}, "given/ledger dependent"},
	} {
		rep, err := audit.Run(audit.Dir(dir), tc.o)
		if err != nil || !rep.OK {
			t.Fatalf("audit: %v %+v", err, rep.Failure)
		}
		if got := src(rep); got != tc.want || rep.Trust.TrustRoot != tc.o.TrustRoot {
			t.Errorf("%+v: %s, trust root %q", tc.o, got, rep.Trust.TrustRoot)
		}
	}
}

// TestAuditPeriodDays: the days run over the whole period given, quiet
// days at both ends included, and the days it covers in part are marked;
// the bounds are whole seconds.
func TestAuditPeriodDays(t *testing.T) {
	dir := auditLedger(t, testkit.Key(t, 50), testkit.Key(t, 51), "") // one decision at Epoch, 2026-11-29T10:00:00Z
	now := func() time.Time { return testkit.Epoch.Add(50*time.Hour + 500*time.Millisecond) }
	days := func(o audit.Options) (string, *audit.Traffic) {
		t.Helper()
		o.Now = now
		rep, err := audit.Run(audit.Dir(dir), o)
		if err != nil || !rep.OK {
			t.Fatalf("audit: %v %+v", err, rep.Failure)
		}
		s := ""
		for _, d := range rep.Traffic.Days {
			s += " " + d.Day[5:]
			if d.Decisions > 0 {
				s += "*"
			}
			if d.Partial {
				s += "~"
			}
		}
		return s, rep.Traffic
	}
	got, tr := days(audit.Options{Since: testkit.Epoch.Add(-48*time.Hour - 500*time.Millisecond), Until: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)})
	if want := " 11-27~ 11-28 11-29* 11-30 12-01 12-02"; got != want {
		t.Errorf("days %q, want %q", got, want)
	}
	if tr.Since != "2026-11-27T10:00:00Z" || tr.Until != "2026-12-03T00:00:00Z" {
		t.Errorf("period %s to %s", tr.Since, tr.Until)
	}
	if tr.FirstDecision != "2026-11-29T10:00:00Z" || tr.LastDecision != tr.FirstDecision {
		t.Errorf("decisions from %s to %s", tr.FirstDecision, tr.LastDecision)
	}
	// Open: from the first decision to the audit's clock, mid-day.
	if got, _ := days(audit.Options{}); got != " 11-29* 11-30 12-01~" {
		t.Errorf("open period: days %q", got)
	}
	// A period without decisions still has its days.
	got, tr = days(audit.Options{Since: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if got != " 11-30 12-01~" || tr.FirstDecision != "" || tr.OutsidePeriod != 1 {
		t.Errorf("empty period: days %q, first %q, outside %d", got, tr.FirstDecision, tr.OutsidePeriod)
	}
}
