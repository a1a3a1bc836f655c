package auditview

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/auditview/auditviewtest"
	"github.com/writ-ledger/writ/verify/audit"
)

// TestFleetPage: the fleet page has the single page's trust statement,
// period, chart (the runners' days added up) and totals, a row a runner
// linked to its section, and each runner's counts by rule linked to the
// decisions behind them; long machine names are never broken, at 1280
// and 800 px, and nothing overflows.
func TestFleetPage(t *testing.T) {
	a, b := syntheticReport(), syntheticReport()
	a.Trust.Decisions = &audit.TrustedKey{Name: "example.com/big/decisions/a", KeyID: strings.Repeat("2", 64), Source: audit.KeyGiven}
	fleet := &audit.FleetReport{Authority: a.Authority, Runners: []audit.RunnerReport{
		{Name: "build-eu-west-runner-07", OK: true, Report: a},
		{Name: "build-ap-southeast-runner-12", OK: true, Report: b},
		{Name: "build-us-east-runner-99", Failure: &audit.Failure{Log: "decisions", Index: -1, Error: "fetching the checkpoint: 404 Not Found"}},
	}, Total: audit.FleetTotals{Decisions: 2 * a.Decisions, Unsigned: 2 * a.Traffic.Unsigned, UnsignedShare: 0.56, WouldRefuse: 2 * a.WouldRefuse,
		WouldRefuseByRule: map[string]int64{"unsigned": 1400000, "unknown-build": 1100002}, FlaggedBuilds: 2 * a.Traffic.FlaggedBuildsTotal}}
	page, err := FleetHTML(fleet, "(devel)")
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	for _, want := range []string{
		`<title>writ fleet audit of example.com/big</title>`,
		`<p class="muted" id="period">From 2026-11-28 12:00:00 UTC to 2026-11-29 12:30:00 UTC (the time of this report)`,
		`<li>authority log key example.com/big (key id ` + strings.Repeat("1", 64) + `), given in the fleet file</li>`,
		`<li>runner build-eu-west-runner-07: decision log key example.com/big/decisions/a (key id ` + strings.Repeat("2", 64) + `), given in the fleet file</li>`,
		`<title>2026-11-29: 1,100,002 would-refuse</title>`,
		`<td class="machine"><a href="#runner-1">build-ap-southeast-runner-12</a></td>`,
		`<h2 id="runner-2">Runner <span class="machine">build-us-east-runner-99</span>: FAILED</h2>`,
		`<a href="#runner-0-rule-unsigned">700,000</a>`,
		`<h3 id="runner-0-rule-unsigned">unsigned: 700,000 decisions, the first 50 shown</h3>`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the fleet page lacks %s", want)
		}
	}
	report, err := json.Marshal(fleet)
	if err != nil {
		t.Fatal(err)
	}
	if err := auditviewtest.CheckFleetPage(page, report); err != nil {
		t.Fatal(err)
	}
	browser, err := auditviewtest.Chromium()
	if err != nil {
		t.Fatal(err)
	}
	if browser == "" {
		t.Skip("chromium not installed: the fleet page was checked as written, not as rendered")
	}
	auditviewtest.CheckLayout(t.Fatalf, t.TempDir(), browser, page)
}
