// Package auditview renders an audit's report for people: the text
// report, the CSV table, and the self-contained HTML page, for one
// ledger (audit.Report) and for a fleet (audit.FleetReport). It reads
// the report and checks nothing: what it shows is what the report says,
// with text from the ledger escaped (humanize.OneLine) in the text and
// by html/template on the page.
package auditview

import (
	"bytes"
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify/audit"
)

// The audit page: one self-contained HTML file (no script, nothing
// loaded; a CSP forbids both) that an auditor reads top to bottom: what
// was verified and against what, the period and the period's totals, each
// with its definition; one stacked chart of the decisions per day by
// verdict, drawn in SVG scaled to the page's width with every value also
// in the table under it; then the tables. Every count carries a data-k
// attribute (dimension:key) so that a test reads the page back and
// compares it with --json (see package auditviewtest). The template is in
// page_tmpl.go, the chart's layout in chart.go.

// verdictDef is a verdict's definition, as admission decides it
// (verify's decide): the legend of the chart.
type verdictDef struct {
	Class   string
	Verdict schemas.Verdict
	Def     string
}

// verdictDefs define the verdicts, in the chart's order.
var verdictDefs = []verdictDef{
	{"admitted", schemas.VerdictAdmitted, "run: every check passed (rule ok), or, under mode off, a rule the mode governs failed with a verified signature by a key delegated for the dispatch behind it (its rule names the failure; it counts in enforce would refuse)"},
	{"unsigned", schemas.VerdictAdmittedUnsigned, "run under mode off although a rule the mode governs failed, with no verified signature by a key delegated for the dispatch behind it (none, an unknown key, or a key not delegated for it)"},
	{"would", schemas.VerdictWouldRefuse, "run under mode warn although a rule the mode governs failed, signed or not"},
	{"refused", schemas.VerdictRefused, "not run: under mode enforce, any rule failed; in every mode, an integrity, content or internal rule failed (such as agent-digest-mismatch, replay, wrong-machine, agent-binary-unreadable), " + alwaysGoverned() + ", or one the runner refuses in every mode (--refuse)"},
}

// alwaysGoverned names the rules of a governed class that refuse in every
// mode all the same (rules.Rule.Always), from the rule table.
func alwaysGoverned() string {
	var ids []string
	for _, r := range rules.Admission() {
		if r.Always && r.Class.Governed() {
			ids = append(ids, r.ID)
		}
	}
	return strings.Join(ids, " or ")
}

// governedNote says which rules the mode governs and why the per-day
// enforce-would-refuse count can exceed the would-refuse segment.
var governedNote = "The mode governs the rules of authenticity, authority, freshness and provenance (unsigned, unknown-key, out-of-scope, expired, unknown-build...), except " + alwaysGoverned() + "; the others refuse in every mode. Enforce would refuse counts every decision run although a rule failed: admitted-unsigned, would-refuse, and admissions under mode off with a failed rule, so on a day it can exceed the would-refuse segment."

// ruleCount is one rule and its count.
type ruleCount struct {
	Rule string
	N    int64
}

// byCount is m's entries, largest first (then by name).
func byCount(m map[string]int64) []ruleCount {
	out := make([]ruleCount, 0, len(m))
	for k, n := range m {
		out = append(out, ruleCount{k, n})
	}
	slices.SortFunc(out, func(a, b ruleCount) int {
		if a.N != b.N {
			return int(b.N - a.N)
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	return out
}

// listedPage is the page's note under a list cut at audit.MaxListed, ""
// when the list holds all of its total.
func listedPage(listed int, total int64) string {
	if int64(listed) >= total {
		return ""
	}
	return fmt.Sprintf("Showing the first %s of %s: a report lists at most %s (in --json too); narrow the period with --since and --until for the rest.",
		humanize.Thousands(int64(listed)), humanize.Thousands(total), humanize.Thousands(audit.MaxListed))
}

// HTML renders a report of a good audit as the audit page: one HTML
// document, UTF-8, with no script and nothing to load. version names the
// writ that made it ("made ... by writ VERSION"). The error is the
// template's, which a report cannot cause.
func HTML(rep *audit.Report, version string) ([]byte, error) {
	bars, ticks := stackedChart(rep.Traffic.Days)
	from, to := periodBounds(rep)
	origin := "a ledger"
	if rep.Authority != nil {
		origin = rep.Authority.Origin
	}
	title := "writ audit of " + origin
	if days := rep.Traffic.Days; len(days) > 0 {
		title += ", " + days[0].Day
		if last := days[len(days)-1].Day; last != days[0].Day {
			title += " to " + last
		}
	}
	witness := ""
	if rep.Witnessing != nil {
		witness = "authority checkpoint " + humanize.Witnessed(*rep.Witnessing)
	}
	data := map[string]any{
		"Rep": rep, "Dims": dimensions(rep), "Share": fmt.Sprintf("%.1f", 100*rep.Traffic.UnsignedShare),
		"Title": title, "From": from, "To": to, "Made": clock(rep.AuditedAt), "Version": version,
		"Trust": trustLines(rep), "Independent": rep.Trust != nil && rep.Trust.Independent, "NotIndependent": NotIndependent,
		"Witness": witness, "DecisionEntries": decisionEntries(rep), "WouldRules": byCount(rep.Traffic.WouldRefuseByRule), "AlwaysRules": alwaysGoverned(),
		"Legend": verdictDefs, "GovernedNote": governedNote,
		"FlaggedCut":  listedPage(len(rep.Traffic.FlaggedBuilds), rep.Traffic.FlaggedBuildsTotal),
		"EventsCut":   listedPage(len(rep.Traffic.AuthorityEvents), rep.Traffic.AuthorityEventsTotal),
		"DetailsView": detailsView{Rules: ruleDetails(rep)}, "PerRule": audit.DetailsPerRule, "Labels": labels(rep),
		"Bars": bars, "Ticks": ticks,
		"W": chartW, "H": chartH, "PlotL": plotL, "PlotR": plotL + plotW, "Base": plotT + plotH, "LabelY": plotT + plotH + 16,
		"AxisX": 14, "AxisY": plotT + plotH/2,
	}
	var b bytes.Buffer
	err := pageTemplate.Execute(&b, data)
	return b.Bytes(), err
}

var pageTemplate = template.Must(template.New("audit").Funcs(template.FuncMap{
	"sub":   func(a, b int) int { return a - b },
	"num":   humanize.Thousands,
	"clock": clockShort,
	"short": shortKey,
}).Parse(pageHTML + detailsHTML))

// ruleDetail is one rule's details table: its count and the decisions
// the report kept for it.
type ruleDetail struct {
	Rule string
	N    int64
	Rows []audit.Listed
	Cut  bool
}

// detailsView is what the "details" template shows: the tables of
// Rules, their ids prefixed by Prefix.
type detailsView struct {
	Prefix string
	Rules  []ruleDetail
}

// ruleDetails lists each rule of the period's counts, the most frequent
// first, with the decisions the report kept for it (Report.Details).
func ruleDetails(rep *audit.Report) []ruleDetail {
	var out []ruleDetail
	for _, r := range byCount(rep.ByRule) {
		rows := rep.Details[r.Rule]
		out = append(out, ruleDetail{Rule: r.Rule, N: r.N, Rows: rows, Cut: int64(len(rows)) < r.N})
	}
	return out
}

// shortKey is a key id's first 16 hex digits, "unsigned" for none.
func shortKey(id string) string {
	if id == "" {
		return "unsigned"
	}
	return id[:min(16, len(id))]
}

// labels are the report's key labels, never nil (the template indexes
// it).
func labels(rep *audit.Report) map[string]string {
	if rep.KeyLabels == nil {
		return map[string]string{}
	}
	return rep.KeyLabels
}
