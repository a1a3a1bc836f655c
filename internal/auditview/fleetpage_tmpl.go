package auditview

// fleetHTML is the fleet page's body (see FleetHTML): pageHead before
// it, detailsHTML after it.
const fleetHTML = `<h1>{{.Title}}</h1>
<p class="muted" id="period">From {{.From}} to {{.To}}, by the time each runner recorded its decision.</p>
<p class="muted" id="made">Report made {{.Made}} by writ {{.Version}}.</p>

<h2>Summary</h2>
<div class="summary">
<div class="card verified {{if .Rep.OK}}ok{{else}}amber{{end}}"><span class="what">{{if .Rep.OK}}Every log verified{{else}}The fleet audit failed: see the runners marked FAILED{{end}}</span>
{{with .Rep.Authority}}<div class="sum">authority log <span class="mono">{{.Origin}}</span> at size {{num .Size}}, root <span class="mono">{{.RootHash}}</span></div>{{end}}
{{with .Rep.Failure}}<div class="sum bad">authority log: {{.Error}}</div>{{end}}
<div class="def">every entry of the authority log and of each runner's decision log checked: signatures, leaf and tree hashes, signed checkpoints, and each authority record's authority at the time the ledger accepted it.</div>
<div class="def" id="trust"><b>Trust:</b><ul class="trust">{{range .Trust}}<li>{{.}}</li>{{end}}{{with .Witness}}<li>{{.}}</li>{{end}}</ul></div></div>
<div class="card"><span class="what">Decisions counted</span><span class="n" data-k="total:decisions">{{num .Rep.Total.Decisions}}</span>
<div class="def">admission decisions the runners that verified recorded in the period.</div></div>
<div class="card{{if .Rep.Total.Unsigned}} warn{{end}}"><span class="what">Unsigned</span><span class="n"><span data-k="total:unsigned">{{num .Rep.Total.Unsigned}}</span> <small>({{.Share}}%)</small></span>
<div class="def">dispatches that carried no signature, whatever their verdict.</div></div>
<div class="card{{if .Rep.Total.WouldRefuse}} warn{{end}}"><span class="what">Enforce would have refused</span><span class="n" data-k="total:would_refuse_under_enforce">{{num .Rep.Total.WouldRefuse}}</span>
{{if .WouldRules}}<div class="sum">= {{range $i, $r := .WouldRules}}{{if $i}} + {{end}}<span data-k="would_refuse_rule:{{$r.Rule}}">{{num $r.N}}</span> {{$r.Rule}}{{end}}</div>{{end}}
<div class="def">decisions run although a rule failed (runners in mode off or warn), by that rule.</div></div>
<div class="card{{if .Rep.Total.Refused}} bad{{end}}"><span class="what">Refused</span><span class="n" data-k="total:refused">{{num .Rep.Total.Refused}}</span>
<div class="def">dispatches not run.</div></div>
<div class="card{{if .Rep.Total.FlaggedBuilds}} warn{{end}}"><span class="what">Flagged builds admitted</span><span class="n" data-k="total:flagged_builds_admitted">{{num .Rep.Total.FlaggedBuilds}}</span>
<div class="def">binaries admitted while their build metadata said dirty or of unknown source.</div></div>
</div>

<h2>Decisions per day, by verdict, over the runners that verified</h2>
<figure class="keep">
<ul class="legend" id="legend">{{range .Legend}}
<li><span class="swatch {{.Class}}"></span><span><b>{{.Verdict}}</b>: {{.Def}}</span></li>{{end}}
</ul>
<svg class="chart" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="decisions per day by verdict">
<text transform="translate({{.AxisX}} {{.AxisY}}) rotate(-90)" text-anchor="middle">decisions</text>
{{range .Ticks}}<line x1="{{$.PlotL}}" x2="{{$.PlotR}}" y1="{{.Y}}" y2="{{.Y}}" stroke="#d0d7de"/><text x="{{printf "%d" (sub $.PlotL 6)}}" y="{{.Y}}" text-anchor="end" dominant-baseline="middle">{{.Label}}</text>
{{end}}{{range .Bars}}{{$b := .}}{{if .Partial}}<rect class="partial" x="{{.X}}" y="{{printf "%d" (sub $.Base 4)}}" width="{{.W}}" height="4"><title>{{.Day}}: partly in the period</title></rect>{{end}}{{range .Segments}}<rect class="{{.Class}}" x="{{$b.X}}" y="{{.Y}}" width="{{$b.W}}" height="{{.H}}"><title>{{$b.Day}}: {{num .N}} {{.Verdict}}</title></rect>{{end}}{{if .ShowTotal}}<text class="total" x="{{.LabelX}}" y="{{.TotalY}}" text-anchor="middle">{{num .Total}}</text>{{end}}{{if .Label}}<text x="{{.LabelX}}" y="{{$.LabelY}}" text-anchor="middle">{{.Label}}</text>{{end}}
{{end}}</svg>
</figure>

<h2>Runners</h2>
<table id="runners"><thead><tr><th>runner</th><th>status</th><th class="n">decisions</th><th class="n">unsigned</th><th class="n">unsigned share</th><th class="n">refused</th><th class="n">would refuse under enforce</th><th>would refuse, by rule</th><th class="n">flagged builds admitted</th></tr></thead><tbody>
{{range $i, $r := .View.Rows}}<tr data-runner="{{.Name}}"><td class="machine"><a href="#runner-{{$i}}">{{.Name}}</a></td>{{if .OK}}<td class="ok">verified</td><td class="n">{{num .Decisions}}</td><td class="n">{{num .Unsigned}}</td><td class="n">{{.Share}}</td><td class="n">{{num .Refused}}</td><td class="n">{{num .WouldRefuse}}</td><td>{{.ByRule}}</td><td class="n">{{num .Flagged}}</td>{{else}}<td class="bad">FAILED</td><td colspan="7">{{.Failure}}</td>{{end}}</tr>
{{end}}{{with .View.Total}}<tr data-runner="total"><th>total</th><th>{{if .OK}}verified{{else}}incomplete{{end}}</th><td class="n">{{num .Decisions}}</td><td class="n">{{num .Unsigned}}</td><td class="n">{{.Share}}</td><td class="n">{{num .Refused}}</td><td class="n">{{num .WouldRefuse}}</td><td>{{.ByRule}}</td><td class="n">{{num .Flagged}}</td></tr>{{end}}
</tbody></table>

<h2 id="details">Each runner</h2>
<p class="muted">A runner's counts by rule link to the decisions behind them: the first {{.PerRule}} of the period per rule; <span class="mono">writ audit --ledger DIR --list --rule RULE</span> on the runner's ledger, or on a replica of its decision log, lists them all.</p>
{{range .Runners}}<section class="runner"><h2 id="{{.Anchor}}">Runner <span class="machine">{{.Name}}</span>: {{if .OK}}verified{{else}}FAILED{{end}}</h2>
{{if .OK}}{{with .Rep}}<dl class="bound">{{with .DecisionLog}}<dt>Decision log</dt><dd><span class="mono">{{.Origin}}</span> at size {{num .Size}}, root <span class="mono">{{.RootHash}}</span></dd>{{end}}
<dt>Counted</dt><dd>{{num .Decisions}} decisions in the period, {{num .Traffic.OutsidePeriod}} outside it (verified, not counted)</dd></dl>{{end}}
<div class="dims"><div><h3>By verdict</h3><table><thead><tr><th>verdict</th><th class="n">decisions</th></tr></thead><tbody>{{range .Verdicts}}<tr><td class="mono">{{.Rule}}</td><td class="n">{{num .N}}</td></tr>{{end}}</tbody></table></div>
<div><h3>By rule</h3><table><thead><tr><th>rule</th><th class="n">decisions</th></tr></thead><tbody>{{$a := .Anchor}}{{range .Rules}}<tr><td class="mono">{{.Rule}}</td><td class="n"><a href="#{{$a}}-rule-{{.Rule}}">{{num .N}}</a></td></tr>{{else}}<tr><td colspan="2" class="muted">none</td></tr>{{end}}</tbody></table></div></div>
{{template "details" .Details}}{{else}}<p class="bad">{{.Failure}}</p>{{end}}</section>
{{end}}
</body></html>
`
