package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html/template"
	"slices"
	"strconv"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// dimensions are the report's counts by one attribute, in a fixed order:
// the same in the table, the CSV and the page.
func dimensions(rep *verify.Report) []dimension {
	verdicts := map[string]int64{}
	for _, v := range schemas.Verdicts {
		verdicts[v] = rep.ByVerdict[v]
	}
	t := rep.Traffic
	return []dimension{
		{"verdict", verdicts}, {"rule", rep.ByRule}, {"mode", t.ByMode}, {"machine", t.ByMachine},
		{"stream", t.ByStream}, {"signer", t.BySigner}, {"would_refuse_rule", t.WouldRefuseByRule},
	}
}

type dimension struct {
	Name   string
	Counts map[string]int64
}

// Title is the dimension's name for people.
func (d dimension) Title() string {
	if d.Name == "would_refuse_rule" {
		return "the rule enforce would have refused them on (admitted under off or warn)"
	}
	if d.Name == "signer" {
		return "signer key id (none: no verified signature)"
	}
	return d.Name
}

// Keys is Counts' keys in order, for the template.
func (d dimension) Keys() []string { return sortedKeys(d.Counts) }

// auditLines is the readable report after a good audit.
func auditLines(rep *verify.Report) []string {
	t := rep.Traffic
	var lines []string
	if p := period(t); p != "" {
		lines = append(lines, fmt.Sprintf("period: %s; %d decisions counted, %d outside it (verified, not counted)", p, rep.Decisions, t.OutsidePeriod))
	}
	lines = append(lines, fmt.Sprintf("unsigned: %d of %d decisions (%.1f%%)", t.Unsigned, rep.Decisions, 100*t.UnsignedShare))
	for _, d := range dimensions(rep)[2:] {
		lines = append(lines, "decisions by "+d.Name+":")
		for _, k := range d.Keys() {
			lines = append(lines, oneLine(fmt.Sprintf("  %-26s %d", k, d.Counts[k])))
		}
	}
	lines = append(lines, "by day (UTC):  decisions  unsigned  refused  would-refuse")
	for _, d := range t.Days {
		lines = append(lines, fmt.Sprintf("  %s  %9d %9d %8d %13d", d.Day, d.Decisions, d.Unsigned, d.Refused, d.WouldRefuse))
	}
	lines = append(lines, fmt.Sprintf("admitted while flagged dirty or unknown: %d", t.FlaggedBuildsTotal))
	for _, f := range t.FlaggedBuilds {
		lines = append(lines, oneLine(fmt.Sprintf("  decision %d %s %s %s on %s instruction %s %s", f.Decision, f.Time, f.Verdict, f.Rule, f.Machine, f.Instruction, f.Digest)))
	}
	lines = append(lines, fmt.Sprintf("authority that ended: %d", t.AuthorityEventsTotal))
	for _, e := range t.AuthorityEvents {
		// The subject carries a revocation's reason: text from the ledger,
		// printed with control characters escaped.
		lines = append(lines, "  "+oneLine(fmt.Sprintf("entry %d %s %s %s", e.Index, e.Time, e.Kind, e.Subject)))
	}
	return lines
}

// period describes the report's period, "" for the whole ledger.
func period(t *verify.Traffic) string {
	switch {
	case t.Since != "" && t.Until != "":
		return "from " + t.Since + " to " + t.Until
	case t.Since != "":
		return "from " + t.Since
	case t.Until != "":
		return "until " + t.Until
	}
	return ""
}

// auditCSV is the report as one table: dimension, key, count. Days come
// as day, day_unsigned, day_refused and day_would_refuse rows.
func auditCSV(rep *verify.Report) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	row := func(dim, key string, n int64) { w.Write([]string{dim, key, strconv.FormatInt(n, 10)}) }
	w.Write([]string{"dimension", "key", "count"})
	row("total", "decisions", rep.Decisions)
	row("total", "unsigned", rep.Traffic.Unsigned)
	row("total", "would_refuse_under_enforce", rep.WouldRefuse)
	row("total", "flagged_builds_admitted", rep.Traffic.FlaggedBuildsTotal)
	row("total", "outside_period", rep.Traffic.OutsidePeriod)
	if rep.Traffic.Since != "" {
		w.Write([]string{"period", "since", rep.Traffic.Since})
	}
	if rep.Traffic.Until != "" {
		w.Write([]string{"period", "until", rep.Traffic.Until})
	}
	for _, d := range dimensions(rep) {
		for _, k := range d.Keys() {
			row(d.Name, k, d.Counts[k])
		}
	}
	for _, d := range rep.Traffic.Days {
		row("day", d.Day, d.Decisions)
		row("day_unsigned", d.Day, d.Unsigned)
		row("day_refused", d.Day, d.Refused)
		row("day_would_refuse", d.Day, d.WouldRefuse)
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// bar is one bar of a chart: its label, value and height in pixels.
type bar struct {
	Label, Title, Value string
	X, H, Y             int
}

// chart lays out one bar per day of values, scaled so that full is
// 160 px (full <= 0: the largest value). Labels are written under every
// bar while they fit, else under every few.
func chart(days []verify.DayCount, value func(verify.DayCount) float64, full float64, format func(float64) string) []bar {
	if full <= 0 {
		for _, d := range days {
			full = max(full, value(d))
		}
	}
	every := 1 + len(days)/30
	var bars []bar
	for i, d := range days {
		h := 0
		if full > 0 {
			h = int(160 * min(value(d), full) / full)
		}
		b := bar{X: 40 + 28*i, H: h, Y: 180 - h, Value: format(value(d))}
		if i%every == 0 {
			b.Label = d.Day
		}
		b.Title = d.Day + ": " + b.Value
		bars = append(bars, b)
	}
	return bars
}

// auditHTML is the report as one self-contained page: no script, no
// network, charts drawn in inline SVG. Every count carries a data-k
// attribute (dimension:key) so that a test can read it back.
func auditHTML(rep *verify.Report) ([]byte, error) {
	share := func(d verify.DayCount) float64 {
		if d.Decisions == 0 {
			return 0
		}
		return 100 * float64(d.Unsigned) / float64(d.Decisions)
	}
	data := map[string]any{
		"Rep": rep, "Dims": dimensions(rep), "Share": fmt.Sprintf("%.1f", 100*rep.Traffic.UnsignedShare),
		"UnsignedBars": chart(rep.Traffic.Days, share, 100, func(v float64) string { return fmt.Sprintf("%.0f%%", v) }),
		"RefusedBars":  chart(rep.Traffic.Days, func(d verify.DayCount) float64 { return float64(d.Refused) }, 0, func(v float64) string { return fmt.Sprintf("%.0f", v) }),
		"Period":       period(rep.Traffic),
		"Width":        80 + 28*len(rep.Traffic.Days),
	}
	var b bytes.Buffer
	err := pageTemplate.Execute(&b, data)
	return b.Bytes(), err
}

var pageTemplate = template.Must(template.New("audit").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>writ audit</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<style>body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:60em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}.ok{color:#060}.bar{fill:#4a7}.bad{fill:#c54}
text{font-size:10px}</style></head><body>
<h1>writ audit</h1>
<p class="ok">The ledger verified: <span data-k="total:entries_verified">{{.Rep.EntriesVerified}}</span> entries
(every signature, every leaf and tree hash, the signed checkpoints{{if .Rep.Authority}}; authority log {{.Rep.Authority.Origin}} at size {{.Rep.Authority.Size}}, root {{.Rep.Authority.RootHash}}{{end}}).</p>
{{if .Rep.DecisionLog}}<p>Decision log {{.Rep.DecisionLog.Origin}} at size {{.Rep.DecisionLog.Size}}, root {{.Rep.DecisionLog.RootHash}}.</p>{{end}}
<p>{{if .Period}}Period: {{.Period}} (UTC, by the time each runner recorded); <span data-k="total:outside_period">{{.Rep.Traffic.OutsidePeriod}}</span> verified decisions fall outside it and are not counted.{{else}}Period: the whole ledger.{{end}}
Decisions counted: <b data-k="total:decisions">{{.Rep.Decisions}}</b>.
Dispatches that carried no signature: <b data-k="total:unsigned">{{.Rep.Traffic.Unsigned}}</b> ({{.Share}}%).
Admitted although a rule failed, so <i>enforce</i> would have refused them: <b data-k="total:would_refuse_under_enforce">{{.Rep.WouldRefuse}}</b>.
Binaries admitted while flagged dirty or of unknown source: <b data-k="total:flagged_builds_admitted">{{.Rep.Traffic.FlaggedBuildsTotal}}</b>.</p>
<h2>Unsigned share per day</h2>
<div style="overflow-x:auto"><svg role="img" aria-label="unsigned share per day" width="{{.Width}}" height="220">{{range .UnsignedBars}}
<rect class="bar" x="{{.X}}" y="{{.Y}}" width="20" height="{{.H}}"><title>{{.Title}}</title></rect><text x="{{.X}}" y="210">{{.Label}}</text>{{end}}
<line x1="36" y1="20" x2="36" y2="180" stroke="#999"/><text x="0" y="24">100%</text><text x="0" y="180">0%</text>
</svg></div>
<p>Hover a bar for its day and value. Days without decisions are shown empty.</p>
<h2>Refusals per day</h2>
<div style="overflow-x:auto"><svg role="img" aria-label="refusals per day" width="{{.Width}}" height="220">{{range .RefusedBars}}
<rect class="bar bad" x="{{.X}}" y="{{.Y}}" width="20" height="{{.H}}"><title>{{.Title}}</title></rect><text x="{{.X}}" y="195">{{.Value}}</text><text x="{{.X}}" y="210">{{.Label}}</text>{{end}}
</svg></div>
<h2>By day (UTC)</h2>
<table><tr><th>day</th><th>decisions</th><th>unsigned</th><th>refused</th><th>would refuse</th></tr>{{range .Rep.Traffic.Days}}
<tr><td>{{.Day}}</td><td class="n" data-k="day:{{.Day}}">{{.Decisions}}</td><td class="n" data-k="day_unsigned:{{.Day}}">{{.Unsigned}}</td><td class="n" data-k="day_refused:{{.Day}}">{{.Refused}}</td><td class="n" data-k="day_would_refuse:{{.Day}}">{{.WouldRefuse}}</td></tr>{{end}}
</table>
{{range .Dims}}<h2>Decisions by {{.Title}}</h2>
<table><tr><th>{{.Name}}</th><th>decisions</th></tr>{{$d := .}}{{range .Keys}}<tr><td>{{.}}</td><td class="n" data-k="{{$d.Name}}:{{.}}">{{index $d.Counts .}}</td></tr>{{end}}</table>
{{end}}<h2>Admitted while flagged dirty or unknown</h2>
<table><tr><th>decision</th><th>time</th><th>rule</th><th>verdict</th><th>machine</th><th>instruction</th><th>digest</th></tr>{{range .Rep.Traffic.FlaggedBuilds}}
<tr><td>{{.Decision}}</td><td>{{.Time}}</td><td>{{.Rule}}</td><td>{{.Verdict}}</td><td>{{.Machine}}</td><td>{{.Instruction}}</td><td>{{.Digest}}</td></tr>{{end}}
</table>
<h2>Authority that ended (<span>{{.Rep.Traffic.AuthorityEventsTotal}}</span>)</h2>
<table><tr><th>entry</th><th>time</th><th>what</th><th>subject</th></tr>{{range .Rep.Traffic.AuthorityEvents}}
<tr><td>{{.Index}}</td><td>{{.Time}}</td><td>{{.Kind}}</td><td>{{.Subject}}</td></tr>{{end}}
</table>
</body></html>
`))
