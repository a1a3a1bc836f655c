package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"html/template"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/verify/audit"
)

// auditFleet is `writ audit --fleet FILE`.
func auditFleet(c *cli.Context, o audit.Options) error {
	for _, f := range []string{"state", "vkey", "decisions-vkey"} {
		if c.String(f) != "" {
			return usageErr("--%s does not go with --fleet: the fleet file names every log's key, and --cache keeps what the last audit verified", f)
		}
	}
	data, err := readWhole(c, c.String("fleet"), audit.MaxFleetFile)
	if err != nil {
		return err
	}
	fleet, err := audit.ParseFleet(data)
	if err != nil {
		return inputErr(fmt.Errorf("--fleet %s: %w", c.String("fleet"), err))
	}
	cache := c.String("cache")
	if cache == "" {
		if cache, err = os.MkdirTemp("", "writ-fleet-"); err != nil {
			return err
		}
		defer os.RemoveAll(cache)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := audit.RunFleet(ctx, fleet, cache, o, c.Duration("timeout"))
	if err != nil {
		return inputErr(fmt.Errorf("--cache: %w", err))
	}
	if c.String("html") != "" {
		var b bytes.Buffer
		if err := fleetPage.Execute(&b, fleetView(rep)); err != nil {
			return err
		}
		if err := writeOutput(c, c.String("html"), b.Bytes()); err != nil {
			return err
		}
	}
	switch {
	case wantJSON(c):
		err = emit(c, rep)
	case c.Bool("csv"):
		var out []byte
		if out, err = fleetCSV(rep); err == nil {
			_, err = c.App.Writer.Write(out)
		}
	default:
		err = emit(c, nil, fleetLines(rep)...)
	}
	if err != nil {
		return err
	}
	if !rep.OK {
		if rep.Failure != nil {
			return fleetFailure(c, rep.Failure)
		}
		return runnersFailed(c, rep)
	}
	return nil
}

// runnersFailed is the error of a fleet audit in which runners' decision
// logs did not verify. When every one of them failed under the key the
// fleet file gives for it (vkey-mismatch), that assertion is refused,
// naming the fleet file, as for the authority log's key.
func runnersFailed(c *cli.Context, rep *audit.FleetReport) error {
	failed, keys := 0, true
	for _, r := range rep.Runners {
		if r.OK {
			continue
		}
		failed++
		if r.Failure == nil {
			keys = false
		} else if _, rule, ok := trustRefusal(r.Failure.Cause); !ok || rule != rules.VKeyMismatch {
			keys = false
		}
	}
	err := fmt.Errorf("fleet audit failed: %d of %d runners' decision logs did not verify (see the report)", failed, len(rep.Runners))
	if failed > 0 && keys {
		return &exitError{code: exitNo, err: err, flag: "--fleet " + c.String("fleet"), rule: rules.VKeyMismatch}
	}
	return noErr(err)
}

// fleetFailure is the error of a fleet audit that failed as a whole: the
// authority log did not verify, or nothing was verified at all. A refused
// trust assertion names where it came from: --trust-root, --policy, or
// the fleet file for a log's key.
func fleetFailure(c *cli.Context, f *audit.Failure) error {
	fleetFlag := "--fleet " + c.String("fleet")
	if f.Rule == rules.NothingVerified {
		return &exitError{code: exitNo, err: fmt.Errorf("fleet audit failed: %s", f.Error), flag: fleetFlag, rule: f.Rule,
			hints: []string{"a fleet audit without runners says nothing about what runners admitted"}}
	}
	err := fmt.Errorf("fleet audit failed: the %s log: %s", f.Log, strings.TrimSpace(f.Error))
	flag, rule, ok := trustRefusal(f.Cause)
	if !ok {
		return noErr(err)
	}
	if rule == rules.VKeyMismatch {
		flag = fleetFlag
	}
	return &exitError{code: exitNo, err: err, flag: flag, rule: rule}
}

func pct(n, of int64) string {
	if of == 0 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

func ruleList(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// fleetRow is one line of the fleet report: a runner, or the total.
type fleetRow struct {
	Name, Status                                       string
	OK                                                 bool
	Decisions, Unsigned, Refused, WouldRefuse, Flagged int64
	Share, ByRule, Failure                             string
}

func fleetView(rep *audit.FleetReport) map[string]any {
	var rows []fleetRow
	for _, r := range rep.Runners {
		row := fleetRow{Name: r.Name, OK: r.OK, Status: "verified"}
		if !r.OK {
			row.Status = "FAILED"
			if r.Failure != nil {
				row.Failure = oneLine(fmt.Sprintf("%s log: %s", r.Failure.Log, r.Failure.Error))
			}
		} else {
			rp := r.Report
			row.Decisions, row.Refused, row.WouldRefuse = rp.Decisions, rp.ByVerdict["refused"], rp.WouldRefuse
			row.Unsigned, row.Flagged = rp.Traffic.Unsigned, rp.Traffic.FlaggedBuildsTotal
			row.Share, row.ByRule = pct(row.Unsigned, row.Decisions), ruleList(rp.Traffic.WouldRefuseByRule)
		}
		rows = append(rows, row)
	}
	t := rep.Total
	total := fleetRow{Name: "total", OK: rep.OK, Decisions: t.Decisions, Unsigned: t.Unsigned, Refused: t.Refused, WouldRefuse: t.WouldRefuse,
		Flagged: t.FlaggedBuilds, Share: pct(t.Unsigned, t.Decisions), ByRule: ruleList(t.WouldRefuseByRule)}
	return map[string]any{"Rep": rep, "Rows": rows, "Total": total}
}

func fleetLines(rep *audit.FleetReport) []string {
	v := fleetView(rep)
	var lines []string
	if rep.Authority != nil {
		lines = append(lines, fmt.Sprintf("authority checkpoint: %s size %d root %s", rep.Authority.Origin, rep.Authority.Size, rep.Authority.RootHash))
	}
	if rep.Failure != nil {
		status := "FAILED"
		if rep.Failure.Rule == rules.NothingVerified {
			status = "NOT CHECKED"
		}
		lines = append(lines, oneLine(rep.Failure.Log+" log: "+status+": "+rep.Failure.Error))
	}
	for _, r := range append(v["Rows"].([]fleetRow), v["Total"].(fleetRow)) {
		if !r.OK && r.Name != "total" {
			lines = append(lines, fmt.Sprintf("runner %s: FAILED: %s", r.Name, r.Failure))
			continue
		}
		who := "runner " + r.Name
		if r.Name == "total" {
			who = fmt.Sprintf("total (%s verified)", plural(int64(countOK(rep)), "runner", "runners"))
		}
		lines = append(lines, fmt.Sprintf("%s: %d decisions, unsigned %d (%s), refused %d, would-refuse under enforce %d (%s), flagged builds admitted %d",
			who, r.Decisions, r.Unsigned, r.Share, r.Refused, r.WouldRefuse, r.ByRule, r.Flagged))
	}
	return lines
}

func countOK(rep *audit.FleetReport) int {
	n := 0
	for _, r := range rep.Runners {
		if r.OK {
			n++
		}
	}
	return n
}

func fleetCSV(rep *audit.FleetReport) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"runner", "dimension", "key", "count"})
	v := fleetView(rep)
	for _, r := range append(v["Rows"].([]fleetRow), v["Total"].(fleetRow)) {
		status := "verified"
		if !r.OK {
			status = "failed"
		}
		w.Write([]string{r.Name, "status", status, ""})
		for _, kv := range []struct {
			k string
			n int64
		}{{"decisions", r.Decisions}, {"unsigned", r.Unsigned}, {"refused", r.Refused}, {"would_refuse_under_enforce", r.WouldRefuse}, {"flagged_builds_admitted", r.Flagged}} {
			w.Write([]string{r.Name, "total", kv.k, strconv.FormatInt(kv.n, 10)})
		}
	}
	for _, r := range rep.Runners {
		if r.OK {
			for k, n := range r.Report.Traffic.WouldRefuseByRule {
				w.Write([]string{r.Name, "would_refuse_by_rule", k, strconv.FormatInt(n, 10)})
			}
		}
	}
	for k, n := range rep.Total.WouldRefuseByRule {
		w.Write([]string{"total", "would_refuse_by_rule", k, strconv.FormatInt(n, 10)})
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

var fleetPage = template.Must(template.New("fleet").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>writ fleet audit</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<style>body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}.ok{color:#060}.bad{color:#a22}</style></head><body>
<h1>writ fleet audit</h1>
{{if .Rep.OK}}<p class="ok">Every log verified.</p>{{else}}<p class="bad">The fleet audit failed: see the rows marked FAILED.</p>{{end}}
{{with .Rep.Authority}}<p>Authority log {{.Origin}} at size {{.Size}}, root {{.RootHash}}.</p>{{end}}
{{with .Rep.Failure}}<p class="bad">Authority log: {{.Error}}</p>{{end}}
<table><tr><th>runner</th><th>status</th><th>decisions</th><th>unsigned</th><th>unsigned share</th><th>refused</th><th>would refuse under enforce</th><th>would refuse, by rule</th><th>flagged builds admitted</th></tr>
{{range .Rows}}<tr data-runner="{{.Name}}"><td>{{.Name}}</td>{{if .OK}}<td class="ok">verified</td><td class="n">{{.Decisions}}</td><td class="n">{{.Unsigned}}</td><td class="n">{{.Share}}</td><td class="n">{{.Refused}}</td><td class="n">{{.WouldRefuse}}</td><td>{{.ByRule}}</td><td class="n">{{.Flagged}}</td>{{else}}<td class="bad">FAILED</td><td colspan="7">{{.Failure}}</td>{{end}}</tr>
{{end}}{{with .Total}}<tr data-runner="total"><th>total</th><th>{{if .OK}}verified{{else}}incomplete{{end}}</th><td class="n">{{.Decisions}}</td><td class="n">{{.Unsigned}}</td><td class="n">{{.Share}}</td><td class="n">{{.Refused}}</td><td class="n">{{.WouldRefuse}}</td><td>{{.ByRule}}</td><td class="n">{{.Flagged}}</td></tr>{{end}}
</table></body></html>
`))
