package main

import (
	"bytes"
	"fmt"
	"html/template"
	"math"

	"github.com/writ-ledger/writ/verify"
)

// The audit page: one self-contained HTML file (no script, nothing
// loaded; a CSP forbids both) that an auditor reads top to bottom: a
// summary of what was verified and the period's totals, each with its
// definition; one stacked chart of the decisions per day by verdict,
// drawn in SVG scaled to the page's width with every value also in the
// table under it; then the tables. Every count carries a data-k
// attribute (dimension:key) so that a test reads the page back and
// compares it with --json.

// Chart geometry, in SVG user units (the SVG scales to the page).
const (
	chartW, chartH     = 720, 250
	plotL, plotT       = 44, 16   // left and top of the plot area
	plotW, plotH       = 668, 180 // its width and height
	maxChartLabels     = 8        // day labels under the bars, at most
	valueLabelMinWidth = 16       // a bar this wide or wider carries its total
)

// segment is one verdict's part of a day's bar.
type segment struct {
	Class, Verdict string
	Y, H           float64
	N              int64
}

// dayBar is one day of the stacked chart.
type dayBar struct {
	Day, Label   string
	X, W, LabelX float64
	Total        int64
	TotalY       float64
	ShowTotal    bool
	Segments     []segment
}

// axisTick is a labelled value of the chart's vertical axis.
type axisTick struct {
	Y     float64
	Label string
}

// stackedChart lays out the days as stacked bars (admitted,
// admitted-unsigned, would-refuse, refused from the bottom), scaled so the
// busiest day fills the plot, with at most maxChartLabels day labels
// (MM-DD) and each bar's total above it when the bar is wide enough.
func stackedChart(days []verify.DayCount) ([]dayBar, []axisTick) {
	var top int64
	for _, d := range days {
		top = max(top, d.Decisions)
	}
	scale := 0.0
	if top > 0 {
		scale = plotH / float64(top)
	}
	n := max(len(days), 1)
	step := float64(plotW) / float64(n)
	every := int(math.Ceil(float64(n) / maxChartLabels))
	bars := make([]dayBar, 0, len(days))
	for i, d := range days {
		x := plotL + step*float64(i) + step*0.15
		b := dayBar{Day: d.Day, X: x, W: step * 0.7, LabelX: x + step*0.35, Total: d.Decisions, ShowTotal: step >= valueLabelMinWidth && d.Decisions > 0}
		if i%every == 0 && len(d.Day) == 10 {
			b.Label = d.Day[5:]
		}
		y := float64(plotT + plotH)
		for _, s := range []segment{
			{Class: "admitted", Verdict: verify.Admitted, N: d.ByVerdict.Admitted},
			{Class: "unsigned", Verdict: verify.AdmittedUnsigned, N: d.ByVerdict.AdmittedUnsigned},
			{Class: "would", Verdict: verify.WouldRefuse, N: d.ByVerdict.WouldRefuse},
			{Class: "refused", Verdict: verify.Refused, N: d.ByVerdict.Refused},
		} {
			if s.N == 0 {
				continue
			}
			s.H = float64(s.N) * scale
			y -= s.H
			s.Y = y
			b.Segments = append(b.Segments, s)
		}
		b.TotalY = y - 3
		bars = append(bars, b)
	}
	ticks := []axisTick{{Y: plotT + plotH, Label: "0"}}
	if top > 0 {
		ticks = append(ticks, axisTick{Y: plotT + plotH/2, Label: fmt.Sprint(float64(top) / 2)}, axisTick{Y: plotT, Label: fmt.Sprint(top)})
	}
	return bars, ticks
}

// auditHTML renders the report as the audit page.
func auditHTML(rep *verify.Report) ([]byte, error) {
	bars, ticks := stackedChart(rep.Traffic.Days)
	data := map[string]any{
		"Rep": rep, "Dims": dimensions(rep), "Share": fmt.Sprintf("%.1f", 100*rep.Traffic.UnsignedShare),
		"Period": period(rep.Traffic), "Bars": bars, "Ticks": ticks,
		"W": chartW, "H": chartH, "PlotL": plotL, "PlotR": plotL + plotW, "Base": plotT + plotH, "LabelY": plotT + plotH + 16,
	}
	var b bytes.Buffer
	err := pageTemplate.Execute(&b, data)
	return b.Bytes(), err
}

var pageTemplate = template.Must(template.New("audit").Funcs(template.FuncMap{"sub": func(a, b int) int { return a - b }}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>writ audit</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<style>
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;margin:0 auto;padding:1.5rem;max-width:72rem}
h1{font-size:1.6rem;margin:0 0 .2rem}h2{font-size:1.15rem;margin:2rem 0 .5rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem}
p{margin:.4rem 0}.muted{color:#57606a}.mono,td{overflow-wrap:anywhere}.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.88em}
.summary{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.75rem;margin:1rem 0}
.card{border:1px solid #d0d7de;border-radius:6px;padding:.6rem .8rem;min-width:0}
.card .n{display:block;font-size:1.7rem;font-weight:600;font-variant-numeric:tabular-nums;line-height:1.2}
.card .what{font-weight:600}.card .def{color:#57606a;font-size:.85rem;margin-top:.25rem}
.card.ok{border-color:#1a7f37;background:#f0fff4}.card.warn .n{color:#9a6700}.card.bad .n{color:#cf222e}
svg.chart{display:block;width:100%;height:auto;max-width:60rem}
svg text{font:12px system-ui,sans-serif;fill:#57606a}svg .total{fill:#1f2328;font-size:11px}
.admitted{fill:#2da44e;background:#2da44e}.unsigned{fill:#d4a72c;background:#d4a72c}.would{fill:#8250df;background:#8250df}.refused{fill:#cf222e;background:#cf222e}
.legend{display:flex;flex-wrap:wrap;gap:.4rem 1.2rem;padding:0;margin:.5rem 0;list-style:none}
.legend li{display:flex;gap:.4rem;align-items:baseline;max-width:100%}.swatch{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;flex:none}
table{border-collapse:collapse;width:100%;margin:.3rem 0 1rem}
td,th{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}th{background:#f6f8fa;font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.n,td.day{white-space:nowrap}
.dims{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:0 1.5rem}.dims h3{font-size:1rem;margin:.8rem 0 .2rem}
@media (max-width:900px){body{padding:1rem;font-size:14px}td,th{padding:.2rem .3rem}}
@page{margin:1.5cm}
@media print{body{max-width:none;padding:0;font-size:10.5pt}h2{break-after:avoid}.card,svg,tr{break-inside:avoid}
.card.ok{background:none}th{background:none}.admitted,.unsigned,.would,.refused{print-color-adjust:exact;-webkit-print-color-adjust:exact}}
</style></head><body>
<h1>writ audit</h1>
<p class="muted">{{if .Period}}Period {{.Period}} (UTC), by the time each runner recorded its decision.{{else}}Period: the whole ledger.{{end}}</p>

<h2>Summary</h2>
<div class="summary">
<div class="card ok"><span class="what">Verified</span><span class="n" data-k="total:entries_verified">{{.Rep.EntriesVerified}}</span>
<div class="def">entries, every one checked: signatures, leaf and tree hashes, signed checkpoints, and each authority record's authority at the time the ledger accepted it.</div></div>
<div class="card"><span class="what">Decisions counted</span><span class="n" data-k="total:decisions">{{.Rep.Decisions}}</span>
<div class="def">admission decisions runners recorded in the period{{if .Rep.Traffic.OutsidePeriod}}; <span data-k="total:outside_period">{{.Rep.Traffic.OutsidePeriod}}</span> more were verified but fall outside it{{end}}.</div></div>
<div class="card{{if .Rep.Traffic.Unsigned}} warn{{end}}"><span class="what">Unsigned</span><span class="n"><span data-k="total:unsigned">{{.Rep.Traffic.Unsigned}}</span> <small>({{.Share}}%)</small></span>
<div class="def">dispatches that carried no signature, whatever their verdict.</div></div>
<div class="card{{if .Rep.WouldRefuse}} warn{{end}}"><span class="what">Enforce would have refused</span><span class="n" data-k="total:would_refuse_under_enforce">{{.Rep.WouldRefuse}}</span>
<div class="def">decisions admitted although a rule failed (runners in mode off or warn): the admitted-unsigned and would-refuse verdicts, and admissions under off with a failed rule.</div></div>
<div class="card{{if index .Rep.ByVerdict "refused"}} bad{{end}}"><span class="what">Refused</span><span class="n" data-k="verdict:refused">{{index .Rep.ByVerdict "refused"}}</span>
<div class="def">dispatches a runner in mode enforce did not run.</div></div>
<div class="card{{if .Rep.Traffic.FlaggedBuildsTotal}} warn{{end}}"><span class="what">Flagged builds admitted</span><span class="n" data-k="total:flagged_builds_admitted">{{.Rep.Traffic.FlaggedBuildsTotal}}</span>
<div class="def">binaries admitted while their build metadata said dirty or of unknown source.</div></div>
</div>
{{if .Rep.Authority}}<p class="muted">Authority log <span class="mono">{{.Rep.Authority.Origin}}</span> at size {{.Rep.Authority.Size}}, root <span class="mono">{{.Rep.Authority.RootHash}}</span>.{{if .Rep.DecisionLog}} Decision log <span class="mono">{{.Rep.DecisionLog.Origin}}</span> at size {{.Rep.DecisionLog.Size}}, root <span class="mono">{{.Rep.DecisionLog.RootHash}}</span>.{{end}}</p>{{end}}

<h2>Decisions per day, by verdict</h2>
<ul class="legend">
<li><span class="swatch admitted"></span><span><b>admitted</b>: every rule passed</span></li>
<li><span class="swatch unsigned"></span><span><b>admitted-unsigned</b>: no signature, run under mode off or warn</span></li>
<li><span class="swatch would"></span><span><b>would-refuse</b>: a rule failed, run under mode warn</span></li>
<li><span class="swatch refused"></span><span><b>refused</b>: a rule failed under mode enforce, not run</span></li>
</ul>
<svg class="chart" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="decisions per day by verdict">
{{range .Ticks}}<line x1="{{$.PlotL}}" x2="{{$.PlotR}}" y1="{{.Y}}" y2="{{.Y}}" stroke="#d0d7de"/><text x="{{printf "%d" (sub $.PlotL 6)}}" y="{{.Y}}" text-anchor="end" dominant-baseline="middle">{{.Label}}</text>
{{end}}{{range .Bars}}{{$b := .}}{{range .Segments}}<rect class="{{.Class}}" x="{{$b.X}}" y="{{.Y}}" width="{{$b.W}}" height="{{.H}}"><title>{{$b.Day}}: {{.N}} {{.Verdict}}</title></rect>{{end}}{{if .ShowTotal}}<text class="total" x="{{.LabelX}}" y="{{.TotalY}}" text-anchor="middle">{{.Total}}</text>{{end}}{{if .Label}}<text x="{{.LabelX}}" y="{{$.LabelY}}" text-anchor="middle">{{.Label}}</text>{{end}}
{{end}}</svg>
<p class="muted">Each bar is one UTC day; a day without decisions is an empty slot. The table gives every value.</p>
<table><tr><th>day</th><th class="n">decisions</th><th class="n">admitted</th><th class="n">admitted-unsigned</th><th class="n">would-refuse</th><th class="n">refused</th><th class="n">unsigned</th><th class="n">enforce would refuse</th></tr>{{range .Rep.Traffic.Days}}
<tr><td class="day">{{.Day}}</td><td class="n" data-k="day:{{.Day}}">{{.Decisions}}</td><td class="n" data-k="day_admitted:{{.Day}}">{{.ByVerdict.Admitted}}</td><td class="n" data-k="day_admitted_unsigned:{{.Day}}">{{.ByVerdict.AdmittedUnsigned}}</td><td class="n" data-k="day_would_refuse_verdict:{{.Day}}">{{.ByVerdict.WouldRefuse}}</td><td class="n" data-k="day_refused:{{.Day}}">{{.Refused}}</td><td class="n" data-k="day_unsigned:{{.Day}}">{{.Unsigned}}</td><td class="n" data-k="day_would_refuse:{{.Day}}">{{.WouldRefuse}}</td></tr>{{end}}
</table>

<h2>Decisions by attribute</h2>
<div class="dims">{{range .Dims}}<div><h3>By {{.Title}}</h3>
<table><tr><th>{{.Name}}</th><th class="n">decisions</th></tr>{{$d := .}}{{range .Keys}}<tr><td class="mono">{{.}}</td><td class="n" data-k="{{$d.Name}}:{{.}}">{{index $d.Counts .}}</td></tr>{{else}}<tr><td colspan="2" class="muted">none</td></tr>{{end}}</table></div>
{{end}}</div>

<h2>Admitted while flagged dirty or unknown ({{.Rep.Traffic.FlaggedBuildsTotal}})</h2>
{{if .Rep.Traffic.FlaggedBuilds}}<table><tr><th>decision</th><th>time</th><th>rule</th><th>verdict</th><th>machine</th><th>instruction</th><th>agent digest</th></tr>{{range .Rep.Traffic.FlaggedBuilds}}
<tr><td>{{.Decision}}</td><td>{{.Time}}</td><td>{{.Rule}}</td><td>{{.Verdict}}</td><td>{{.Machine}}</td><td class="mono">{{.Instruction}}</td><td class="mono">{{.Digest}}</td></tr>{{end}}
</table>{{else}}<p class="muted">None.</p>{{end}}

<h2>Authority that ended ({{.Rep.Traffic.AuthorityEventsTotal}})</h2>
{{if .Rep.Traffic.AuthorityEvents}}<table><tr><th>entry</th><th>time</th><th>what</th><th>subject</th></tr>{{range .Rep.Traffic.AuthorityEvents}}
<tr><td>{{.Index}}</td><td>{{.Time}}</td><td>{{.Kind}}</td><td class="mono">{{.Subject}}</td></tr>{{end}}
</table>{{else}}<p class="muted">None in the period.</p>{{end}}
</body></html>
`))
