package auditview

// The audit pages' templates (see HTML and FleetHTML). Numbers are
// written with thousands separators; each count's data-k names it.

// pageStyle is the style sheet of both pages: the single ledger's and
// the fleet's.
const pageStyle = `*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;margin:0 auto;padding:1.5rem;max-width:72rem}
h1{font-size:1.5rem;margin:0 0 .2rem;overflow-wrap:anywhere}h2{font-size:1.15rem;margin:2rem 0 .5rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem}
p{margin:.4rem 0}.muted{color:#57606a}.mono,td{overflow-wrap:anywhere}.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.88em}
.summary{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.75rem;margin:1rem 0}
.card{border:1px solid #d0d7de;border-radius:6px;padding:.6rem .8rem;min-width:0}
.card .n{display:block;font-size:1.7rem;font-weight:600;font-variant-numeric:tabular-nums;line-height:1.2}
.card .what{font-weight:600}.card .def{color:#57606a;font-size:.85rem;margin-top:.25rem}.card .sum{font-size:.9rem;font-variant-numeric:tabular-nums}
td.ok{color:#1a7f37}td.bad,p.bad,.sum.bad{color:#cf222e}section.runner h2 .machine{white-space:nowrap}
.card.ok{border-color:#1a7f37;background:#f0fff4}.card.amber{border-color:#bf8700;background:#fff8c5}.card.warn .n{color:#9a6700}.card.bad .n{color:#cf222e}
.card.verified{grid-column:1/-1}.trust{margin:.3rem 0 0;padding-left:1.1rem;font-size:.85rem}.trust li{overflow-wrap:anywhere}
svg.chart{display:block;width:100%;height:auto;max-width:60rem}
svg text{font:12px system-ui,sans-serif;fill:#57606a}svg .total{fill:#1f2328;font-size:11px}
.admitted{fill:#2da44e;background:#2da44e}.unsigned{fill:#d4a72c;background:#d4a72c}.would{fill:#8250df;background:#8250df}.refused{fill:#cf222e;background:#cf222e}
rect.partial{fill:none;stroke:#57606a;stroke-dasharray:3 2}
.legend{padding:0;margin:.5rem 0;list-style:none}
.legend li{display:flex;gap:.5rem;align-items:baseline;margin:.2rem 0}.swatch{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;flex:none}
.keep{break-inside:avoid;page-break-inside:avoid;margin:0}
table{border-collapse:collapse;width:100%;margin:.3rem 0 1rem}
td,th{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}th{background:#f6f8fa;font-weight:600}
th.group{text-align:center}td.machine{white-space:nowrap}td.why{color:#57606a;font-size:.88em;border-top:none}tbody.decision{break-inside:avoid}h3{font-size:1rem;margin:1rem 0 .2rem}table.list td.nw{width:1%}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.n,td.day,td.nw{white-space:nowrap}
.dims{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:0 1.5rem}.dims h3{font-size:1rem;margin:.8rem 0 .2rem}
dl.bound{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:.3rem 0}dl.bound dt{font-weight:600}dl.bound dd{margin:0;min-width:0;overflow-wrap:anywhere}
@media (max-width:900px){body{padding:1rem;font-size:14px}#runners{font-size:.8em}table.details td.nw{white-space:normal}table.list .mono{font-size:.8em}td,th{padding:.2rem .3rem}dl.bound{grid-template-columns:1fr}dl.bound dd{margin-bottom:.3rem}}
@page{margin:1.5cm}
@media print{body{max-width:none;padding:0;font-size:10.5pt}h2,h3{break-after:avoid}.card,svg,tr{break-inside:avoid}thead{display:table-header-group}
.card.ok,.card.amber{background:none}th{background:none}.admitted,.unsigned,.would,.refused{print-color-adjust:exact;-webkit-print-color-adjust:exact}}
`

// pageHead opens a page: its title, no script and nothing to load (the
// CSP), and the style sheet.
const pageHead = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<style>
` + pageStyle + `</style></head><body>
`

// detailsHTML is the "details" template: one table per rule of the
// decisions the report kept for it (ruleDetails), each table's id
// prefixed by .Prefix (a fleet page's runner).
const detailsHTML = `{{define "details"}}{{$p := .Prefix}}{{range .Rules}}<section><h3 id="{{$p}}rule-{{.Rule}}">{{.Rule}}: {{num .N}} decision{{if ne .N 1}}s{{end}}{{if .Cut}}, the first {{len .Rows}} shown{{end}}</h3>
<table class="list details" data-rule="{{.Rule}}"><thead><tr><th>decision</th><th>time (UTC)</th><th>machine</th><th>stream</th><th>verdict</th><th>instruction</th><th>signer</th></tr></thead>{{range .Rows}}
<tbody class="decision"><tr><td class="nw">{{.Index}}</td><td class="nw">{{clock .Time}}</td><td class="machine">{{.Machine}}</td><td class="mono">{{.Stream}}</td><td class="nw">{{.Verdict}}</td><td class="mono">{{.InstructionID}}</td><td class="mono nw" title="{{.Signer}}">{{short .Signer}}</td></tr>{{if .Reason}}
<tr><td colspan="7" class="why">{{.Reason}}</td></tr>{{end}}</tbody>{{end}}
</table></section>
{{else}}<p class="muted">No decisions in the period.</p>{{end}}{{end}}`

// pageHTML is the single ledger's page.
const pageHTML = pageHead + `<h1>{{.Title}}</h1>
<p class="muted" id="period">From {{.From}} to {{.To}}, by the time each runner recorded its decision.</p>
<p class="muted" id="made">Report made {{.Made}} by writ {{.Version}}.</p>

<h2>Summary</h2>
<div class="summary">
<div class="card verified {{if .Independent}}ok{{else}}amber{{end}}"><span class="what">Verified</span><span class="n" data-k="total:entries_verified">{{num .Rep.EntriesVerified}}</span>
<div class="sum">= <span data-k="total:authority_entries">{{num .Rep.AuthorityEntries}}</span> authority + <span data-k="total:decision_entries">{{num .DecisionEntries}}</span> decisions</div>
<div class="def">entries, every one checked: signatures, leaf and tree hashes, signed checkpoints, and each authority record's authority at the time the ledger accepted it.</div>
<div class="def" id="trust"><b>Trust:</b>{{if not .Independent}} <b>not independent</b>: {{.NotIndependent}}.{{end}}<ul class="trust">{{range .Trust}}<li>{{.}}</li>{{end}}{{if .Witness}}<li>{{.Witness}}</li>{{end}}</ul></div></div>
<div class="card"><span class="what">Decisions counted</span><span class="n" data-k="total:decisions">{{num .Rep.Decisions}}</span>
<div class="def">admission decisions runners recorded in the period{{if .Rep.Traffic.OutsidePeriod}}; <span data-k="total:outside_period">{{num .Rep.Traffic.OutsidePeriod}}</span> more were verified but fall outside it{{end}}.</div></div>
<div class="card{{if .Rep.Traffic.Unsigned}} warn{{end}}"><span class="what">Unsigned</span><span class="n"><span data-k="total:unsigned">{{num .Rep.Traffic.Unsigned}}</span> <small>({{.Share}}%)</small></span>
<div class="def">dispatches that carried no signature, whatever their verdict.</div></div>
<div class="card{{if .Rep.WouldRefuse}} warn{{end}}"><span class="what">Enforce would have refused</span><span class="n" data-k="total:would_refuse_under_enforce">{{num .Rep.WouldRefuse}}</span>
{{if .WouldRules}}<div class="sum" id="would-sum">= {{range $i, $r := .WouldRules}}{{if $i}} + {{end}}<span data-k="would_refuse_rule:{{$r.Rule}}">{{num $r.N}}</span> {{$r.Rule}}{{end}}</div>{{end}}
<div class="def">decisions run although a rule failed (runners in mode off or warn), by that rule: the admitted-unsigned and would-refuse verdicts, and admissions under off with a failed rule.</div></div>
<div class="card{{if index .Rep.ByVerdict "refused"}} bad{{end}}"><span class="what">Refused</span><span class="n" data-k="verdict:refused">{{num (index .Rep.ByVerdict "refused")}}</span>
<div class="def">dispatches not run: any failed rule under mode enforce; in every mode, an integrity, content or internal rule, {{.AlwaysRules}}, or a rule given to --refuse.</div></div>
<div class="card{{if .Rep.Traffic.FlaggedBuildsTotal}} warn{{end}}"><span class="what">Flagged builds admitted</span><span class="n" data-k="total:flagged_builds_admitted">{{num .Rep.Traffic.FlaggedBuildsTotal}}</span>
<div class="def">binaries admitted while their build metadata said dirty or of unknown source.</div></div>
</div>

<h2>What this report is bound to</h2>
<dl class="bound">
{{with .Rep.Authority}}<dt>Authority log</dt><dd><span class="mono">{{.Origin}}</span> at size {{num .Size}}, root <span class="mono">{{.RootHash}}</span></dd>{{end}}
{{with .Rep.DecisionLog}}<dt>Decision log</dt><dd><span class="mono">{{.Origin}}</span> at size {{num .Size}}, root <span class="mono">{{.RootHash}}</span></dd>{{end}}
{{if .Witness}}<dt>Witnesses</dt><dd>{{.Witness}}</dd>{{end}}
<dt>Runner key</dt><dd>{{if .Rep.RunnerKeyProtection}}protected by {{.Rep.RunnerKeyProtection}}, as the ledger directory states it (not covered by any signature){{else}}not in this directory (a replica or an export){{end}}</dd>
<dt>Period</dt><dd>from {{.From}} to {{.To}}: {{num .Rep.Decisions}} decisions counted, <span data-k="total:outside_period">{{num .Rep.Traffic.OutsidePeriod}}</span> outside it (verified, not counted)</dd>
</dl>

<h2>Decisions per day, by verdict</h2>
<figure class="keep">
<ul class="legend" id="legend">{{range .Legend}}
<li><span class="swatch {{.Class}}"></span><span><b>{{.Verdict}}</b>: {{.Def}}</span></li>{{end}}
</ul>
<p class="muted" id="governed">{{.GovernedNote}}</p>
<svg class="chart" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="decisions per day by verdict">
<text transform="translate({{.AxisX}} {{.AxisY}}) rotate(-90)" text-anchor="middle">decisions</text>
{{range .Ticks}}<line x1="{{$.PlotL}}" x2="{{$.PlotR}}" y1="{{.Y}}" y2="{{.Y}}" stroke="#d0d7de"/><text x="{{printf "%d" (sub $.PlotL 6)}}" y="{{.Y}}" text-anchor="end" dominant-baseline="middle">{{.Label}}</text>
{{end}}{{range .Bars}}{{$b := .}}{{if .Partial}}<rect class="partial" x="{{.X}}" y="{{printf "%d" (sub $.Base 4)}}" width="{{.W}}" height="4"><title>{{.Day}}: partly in the period</title></rect>{{end}}{{range .Segments}}<rect class="{{.Class}}" x="{{$b.X}}" y="{{.Y}}" width="{{$b.W}}" height="{{.H}}"><title>{{$b.Day}}: {{num .N}} {{.Verdict}}</title></rect>{{end}}{{if .ShowTotal}}<text class="total" x="{{.LabelX}}" y="{{.TotalY}}" text-anchor="middle">{{num .Total}}</text>{{end}}{{if .Label}}<text x="{{.LabelX}}" y="{{$.LabelY}}" text-anchor="middle">{{.Label}}</text>{{end}}
{{end}}</svg>
</figure>
<p class="muted">Each bar is one UTC day of the period; a day without decisions is an empty slot, and a day only partly in the period has a dashed base and is marked partial in the table. The table gives every value.</p>
<table id="days"><thead><tr><th rowspan="2">day</th><th rowspan="2" class="n">decisions</th><th colspan="4" class="group">by verdict (adds up to decisions)</th><th colspan="2" class="group">across verdicts</th></tr>
<tr><th class="n">admitted</th><th class="n">admitted-unsigned</th><th class="n">would-refuse</th><th class="n">refused</th><th class="n">unsigned</th><th class="n">enforce would refuse</th></tr></thead>
<tbody>{{range .Rep.Traffic.Days}}
<tr><td class="day">{{.Day}}{{if .Partial}} <small class="muted">partial</small>{{end}}</td><td class="n" data-k="day:{{.Day}}">{{num .Decisions}}</td><td class="n" data-k="day_admitted:{{.Day}}">{{num .ByVerdict.Admitted}}</td><td class="n" data-k="day_admitted_unsigned:{{.Day}}">{{num .ByVerdict.AdmittedUnsigned}}</td><td class="n" data-k="day_would_refuse_verdict:{{.Day}}">{{num .ByVerdict.WouldRefuse}}</td><td class="n" data-k="day_refused:{{.Day}}">{{num .Refused}}</td><td class="n" data-k="day_unsigned:{{.Day}}">{{num .Unsigned}}</td><td class="n" data-k="day_would_refuse:{{.Day}}">{{num .WouldRefuse}}</td></tr>{{end}}
</tbody></table>

<h2>Decisions by attribute</h2>
<div class="dims">{{range .Dims}}<div><h3>By {{.Title}}</h3>
<table><thead><tr><th>{{.Header}}</th><th class="n">decisions</th></tr></thead><tbody>{{$d := .}}{{range .Keys}}<tr>{{if eq $d.Name "signer"}}<td class="mono" title="{{.}}">{{short .}}{{with index $.Labels .}}<br><span class="muted">{{.}}</span>{{end}}</td>{{else}}<td class="mono{{if eq $d.Name "machine"}} machine{{end}}">{{.}}</td>{{end}}{{if eq $d.Name "rule"}}<td class="n"><a href="#rule-{{.}}" data-k="{{$d.Name}}:{{.}}">{{num (index $d.Counts .)}}</a></td>{{else}}<td class="n" data-k="{{$d.Name}}:{{.}}">{{num (index $d.Counts .)}}</td>{{end}}</tr>{{else}}<tr><td colspan="2" class="muted">none</td></tr>{{end}}</tbody></table></div>
{{end}}</div>

<h2 id="details">The decisions behind each rule</h2>
<p class="muted">Each rule's count above links here. A table shows the first {{.PerRule}} decisions of the period that rule decided; <span class="mono">writ audit --list --rule RULE</span> lists them all, filtered by machine, stream, signer, verdict and time.</p>
{{template "details" .DetailsView}}

<h2>Admitted while flagged dirty or unknown ({{num .Rep.Traffic.FlaggedBuildsTotal}})</h2>
{{if .FlaggedCut}}<p class="muted" id="flagged-cut">{{.FlaggedCut}}</p>{{end}}
{{if .Rep.Traffic.FlaggedBuilds}}<table class="list"><thead><tr><th>decision</th><th>time (UTC)</th><th>rule</th><th>verdict</th><th>machine</th><th>instruction</th><th>agent digest</th></tr></thead><tbody>{{range .Rep.Traffic.FlaggedBuilds}}
<tr><td class="nw">{{.Decision}}</td><td class="nw">{{clock .Time}}</td><td class="nw">{{.Rule}}</td><td class="nw">{{.Verdict}}</td><td class="nw">{{.Machine}}</td><td class="mono">{{.Instruction}}</td><td class="mono">{{.Digest}}</td></tr>{{end}}
</tbody></table>{{else}}<p class="muted">None.</p>{{end}}

{{with .Rep.Provenance}}<h2 id="built-by">Who built what is pinned</h2>
<p>Pins with build provenance: <span data-k="total:pins_with_provenance">{{num .PinsWith}}</span>, without: <span data-k="total:pins_without_provenance">{{num .PinsWithout}}</span>. Admissions in the period that ran a binary pinned with provenance: <span data-k="total:admitted_relying_on_provenance">{{num .AdmittedRelying}}</span>, without: <span data-k="total:admitted_without_provenance">{{num .AdmittedWithout}}</span>. Every provenance was checked again offline when the audit replayed its pin.</p>
{{if .Pins}}<table class="list"><thead><tr><th>entry</th><th>artifact</th><th>version</th><th>builder</th><th>signed by</th><th>source</th><th>commit</th></tr></thead><tbody>{{range .Pins}}
<tr><td class="nw">{{.Index}}</td><td class="nw">{{.Artifact}}</td><td class="nw">{{.Version}}</td><td class="mono">{{.Builder}}</td><td class="mono">{{if .Identity}}certificate of {{.Identity}} from {{.Issuer}}, trusted root {{.BuilderKey}}{{else}}key {{.BuilderKey}}{{end}}</td><td class="mono">{{.Repository}}</td><td class="mono">{{.Commit}}</td></tr>{{end}}
</tbody></table>{{else}}<p class="muted">No pin carries build provenance.</p>{{end}}{{end}}

<h2>Authority that ended ({{num .Rep.Traffic.AuthorityEventsTotal}})</h2>
{{if .EventsCut}}<p class="muted" id="events-cut">{{.EventsCut}}</p>{{end}}
{{if .Rep.Traffic.AuthorityEvents}}<table class="list"><thead><tr><th>entry</th><th>time (UTC)</th><th>what</th><th>subject</th></tr></thead><tbody>{{range .Rep.Traffic.AuthorityEvents}}
<tr><td class="nw">{{.Index}}</td><td class="nw">{{clock .Time}}</td><td class="nw">{{.Kind}}</td><td class="mono">{{.Subject}}</td></tr>{{end}}
</tbody></table>{{else}}<p class="muted">None in the period.</p>{{end}}
</body></html>
`
