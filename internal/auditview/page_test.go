package auditview

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/internal/auditview/auditviewtest"
	"github.com/writ-ledger/writ/verify/audit"
)

// syntheticReport is a report as an audit of a large ledger would make
// it, without the ledger: a busy day of 1,250,001 decisions, lists cut at
// audit.MaxListed.
func syntheticReport() *audit.Report {
	tr := &audit.Traffic{ByMode: map[string]int64{"off": 1250001}, ByMachine: map[string]int64{"build-eu-west-runner-07": 1250001},
		ByStream: map[string]int64{"none": 1250001}, BySigner: map[string]int64{"none": 1250001},
		Unsigned: 700000, UnsignedShare: 0.56, WouldRefuseByRule: map[string]int64{"unsigned": 700000, "unknown-build": 550001},
		Days: []audit.DayCount{
			{Day: "2026-11-28", Partial: true},
			{Day: "2026-11-29", Decisions: 1250001, Unsigned: 700000, WouldRefuse: 1250001, ByVerdict: audit.VerdictCounts{AdmittedUnsigned: 700000, WouldRefuse: 550001}},
		},
		FlaggedBuildsTotal: 550001, AuthorityEventsTotal: 1, Since: "2026-11-28T12:00:00Z", OutsidePeriod: 7,
		FlaggedBuilds: []audit.FlaggedBuild{{Decision: 3, Time: "2026-11-29T10:00:00Z", Rule: "unknown-build", Verdict: "would-refuse", Machine: "runner-01",
			Instruction: strings.Repeat("0", 32), Digest: "sha256:" + strings.Repeat("cd", 32)}},
		AuthorityEvents: []audit.AuthorityEvent{{Index: 2, Kind: "revocation", Time: "2026-11-29T11:00:00Z", Subject: "k (left)"}},
	}
	details := map[string][]audit.Listed{}
	for rule, verdict := range map[string]string{"unsigned": "admitted-unsigned", "unknown-build": "would-refuse"} {
		for i := range audit.DetailsPerRule {
			details[rule] = append(details[rule], audit.Listed{Index: int64(i), Time: "2026-11-29T10:00:00Z", Machine: "build-eu-west-runner-07",
				InstructionID: strings.Repeat("0a", 16), Stream: "deploy/web", Verdict: verdict, Rule: rule, Mode: "warn", Reason: "failed the check that " + rule})
		}
	}
	return &audit.Report{OK: true, EntriesVerified: 1250009, Details: details, AuthorityEntries: 8, Decisions: 1250001, WouldRefuse: 1250001,
		ByVerdict: map[string]int64{"admitted": 0, "admitted-unsigned": 700000, "would-refuse": 550001, "refused": 0},
		ByRule:    map[string]int64{"unsigned": 700000, "unknown-build": 550001}, RunnerKeyProtection: "passphrase",
		Authority:   &audit.CheckpointSummary{Origin: "example.com/big", Size: 8, RootHash: strings.Repeat("ab", 32)},
		DecisionLog: &audit.CheckpointSummary{Origin: "example.com/big/decisions/0123456789abcdef", Size: 1250008, RootHash: strings.Repeat("ef", 32)},
		Trust:       &audit.Trust{Authority: &audit.TrustedKey{Name: "example.com/big", KeyID: strings.Repeat("1", 64), Source: audit.KeyState}, TrustRoot: "sha256:" + strings.Repeat("9", 64), Independent: true},
		AuditedAt:   "2026-11-29T12:30:00Z", Traffic: tr}
}

// TestAuditPageRendering: the page's legend defines each verdict as
// admission decides it; the chart's axis has whole ticks with thousands
// separators and a label; tables have a thead; a cut list says it is
// cut; the card of what enforce would have refused adds up by rule; what
// the report is bound to has a heading, the runner key's protection and
// the decisions outside the period.
func TestAuditPageRendering(t *testing.T) {
	rep := syntheticReport()
	page, err := HTML(rep, "(devel)")
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	want := []string{
		`<li><span class="swatch admitted"></span><span><b>admitted</b>: run: every check passed (rule ok), or, under mode off, a rule the mode governs failed with a verified signature by a key delegated for the dispatch behind it (its rule names the failure; it counts in enforce would refuse)</span></li>`,
		`<li><span class="swatch unsigned"></span><span><b>admitted-unsigned</b>: run under mode off although a rule the mode governs failed, with no verified signature by a key delegated for the dispatch behind it (none, an unknown key, or a key not delegated for it)</span></li>`,
		`<li><span class="swatch would"></span><span><b>would-refuse</b>: run under mode warn although a rule the mode governs failed, signed or not</span></li>`,
		`<li><span class="swatch refused"></span><span><b>refused</b>: not run: under mode enforce, any rule failed; in every mode, an integrity, content or internal rule failed (such as agent-digest-mismatch, replay, wrong-machine, agent-binary-unreadable), bad-signature or quarantined, or one the runner refuses in every mode (--refuse)</span></li>`,
		"so on a day it can exceed the would-refuse segment.",
		`rotate(-90)" text-anchor="middle">decisions</text>`,
		`<span class="n" data-k="total:entries_verified">1,250,009</span>`,
		`= <span data-k="total:authority_entries">8</span> authority + <span data-k="total:decision_entries">1,250,008</span> decisions`,
		`id="would-sum">= <span data-k="would_refuse_rule:unsigned">700,000</span> unsigned + <span data-k="would_refuse_rule:unknown-build">550,001</span> unknown-build</div>`,
		`<p class="muted" id="flagged-cut">Showing the first 1 of 550,001: a report lists at most 1,000 (in --json too); narrow the period with --since and --until for the rest.</p>`,
		"<h2>What this report is bound to</h2>",
		"<dt>Runner key</dt><dd>protected by passphrase, as the ledger directory states it (not covered by any signature)</dd>",
		`<dt>Period</dt><dd>from 2026-11-28 12:00:00 UTC to 2026-11-29 12:30:00 UTC (the time of this report): 1,250,001 decisions counted, <span data-k="total:outside_period">7</span> outside it (verified, not counted)</dd>`,
		`<li>authority log key example.com/big (key id ` + strings.Repeat("1", 64) + `) remembered in the state file</li>`,
		`<li>first root sha256:` + strings.Repeat("9", 64) + ` as given with --trust-root</li>`,
		`<th colspan="4" class="group">by verdict (adds up to decisions)</th><th colspan="2" class="group">across verdicts</th>`,
		`<td class="day">2026-11-28 <small class="muted">partial</small></td>`,
		`<td class="nw">2026-11-29 10:00:00</td><td class="nw">unknown-build</td><td class="nw">would-refuse</td><td class="nw">runner-01</td>`,
		"<h3>By the rule enforce would have refused them on (admitted under off or warn)</h3>\n<table><thead><tr><th>rule</th>",
	}
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	if strings.Contains(s, "events-cut") {
		t.Error("a list that holds its whole total says it is cut")
	}
	// Every table has its header rows in a thead (repeated on printed
	// pages), and the chart with its legend is kept on one page.
	if tables, theads := strings.Count(s, "<table"), strings.Count(s, "<thead>"); tables != theads || tables < 4 {
		t.Errorf("%d tables, %d theads", tables, theads)
	}
	if !strings.Contains(s, ".keep{break-inside:avoid") || !regexp.MustCompile(`(?s)<figure class="keep">\s*<ul class="legend".*</svg>\s*</figure>`).MatchString(s) {
		t.Error("the legend and the chart are not kept together")
	}
	var ticks []string
	for _, m := range regexp.MustCompile(`text-anchor="end" dominant-baseline="middle">([^<]*)<`).FindAllStringSubmatch(s, -1) {
		ticks = append(ticks, m[1])
	}
	if got := strings.Join(ticks, " "); got != "0 500,000 1,000,000 1,500,000" {
		t.Errorf("axis ticks %q", got)
	}
	// Seven-digit numbers fit at both widths, and the page reads back as
	// the report.
	report, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := auditviewtest.CheckPage(page, report); err != nil {
		t.Fatal(err)
	}
	browser, err := auditviewtest.Chromium()
	if err != nil {
		t.Fatal(err)
	}
	if browser == "" {
		t.Skip("chromium not installed: the page was checked as written, not as rendered")
	}
	path := filepath.Join(t.TempDir(), "big.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	auditviewtest.CheckRendered(t.Fatalf, t.TempDir(), browser, path, page, report)
}

// TestAxisTicks: whole steps of 1, 2 or 5 times a power of ten, at most
// five of them up to the busiest day.
func TestAxisTicks(t *testing.T) {
	for top, want := range map[int64]string{0: "0 1", 1: "0 1", 7: "0 2 4 6 8", 43: "0 10 20 30 40 50", 100: "0 20 40 60 80 100", 2500001: "0 1,000,000 2,000,000 3,000,000"} {
		_, ticks := stackedChart([]audit.DayCount{{Day: "2026-11-29", Decisions: top}})
		var got []string
		for _, tk := range ticks {
			got = append(got, tk.Label)
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("busiest day %d: ticks %q, want %q", top, g, want)
		}
	}
}
