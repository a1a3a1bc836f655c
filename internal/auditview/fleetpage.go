package auditview

import (
	"bytes"
	"fmt"
	"html/template"
	"slices"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/verify/audit"
)

// The fleet page: the single ledger's page (page.go) for a fleet. What
// was verified and against which keys (every key from the fleet file),
// the period, the fleet's totals, one chart of the decisions per day by
// verdict over every runner that verified, a row a runner, then each
// runner's detail: its decision log, its counts by verdict and by rule,
// and the decisions behind each rule.

// fleetRunner is one runner's detail on the fleet page.
type fleetRunner struct {
	Name, Anchor string
	OK           bool
	Failure      string
	Rep          *audit.Report
	Verdicts     []ruleCount
	Rules        []ruleCount
	Details      detailsView
}

// FleetHTML renders a fleet report as one self-contained HTML page (no
// script, nothing to load), made by writ version. The error is the
// template's, which a report cannot cause.
func FleetHTML(rep *audit.FleetReport, version string) ([]byte, error) {
	v := newFleetView(rep)
	var runners []fleetRunner
	var days []audit.DayCount
	var first *audit.Report
	for i, r := range rep.Runners {
		fr := fleetRunner{Name: r.Name, Anchor: fmt.Sprintf("runner-%d", i), OK: r.OK, Failure: v.Rows[i].Failure, Rep: r.Report}
		if r.OK && r.Report != nil {
			if first == nil {
				first = r.Report
			}
			days = addDays(days, r.Report.Traffic.Days)
			fr.Verdicts, fr.Rules = byCount(r.Report.ByVerdict), byCount(r.Report.ByRule)
			fr.Details = detailsView{Prefix: fr.Anchor + "-", Rules: ruleDetails(r.Report)}
		}
		runners = append(runners, fr)
	}
	data := map[string]any{"Rep": rep, "View": v, "Runners": runners, "Version": version, "Legend": verdictDefs,
		"Title": "writ fleet audit", "From": "the start of each log", "To": "the time of this report", "Made": "",
		"Share": fmt.Sprintf("%.1f", 100*rep.Total.UnsignedShare), "PerRule": audit.DetailsPerRule, "Trust": fleetTrust(rep),
		"WouldRules": byCount(rep.Total.WouldRefuseByRule)}
	if rep.Authority != nil {
		data["Title"] = "writ fleet audit of " + rep.Authority.Origin
	}
	if first != nil {
		data["From"], data["To"] = periodBounds(first)
		data["Made"] = clock(first.AuditedAt)
	}
	if rep.Witnessing != nil {
		data["Witness"] = "authority checkpoint " + humanize.Witnessed(*rep.Witnessing)
	}
	bars, ticks := stackedChart(days)
	for k, x := range map[string]any{"Bars": bars, "Ticks": ticks, "W": chartW, "H": chartH, "PlotL": plotL, "PlotR": plotL + plotW,
		"Base": plotT + plotH, "LabelY": plotT + plotH + 16, "AxisX": 14, "AxisY": plotT + plotH/2} {
		data[k] = x
	}
	var b bytes.Buffer
	err := fleetPage.Execute(&b, data)
	return b.Bytes(), err
}

// addDays adds the runner's days to the fleet's, day by day, in order.
func addDays(fleet, runner []audit.DayCount) []audit.DayCount {
	for _, d := range runner {
		i, found := slices.BinarySearchFunc(fleet, d.Day, func(x audit.DayCount, day string) int {
			switch {
			case x.Day < day:
				return -1
			case x.Day > day:
				return 1
			}
			return 0
		})
		if !found {
			fleet = slices.Insert(fleet, i, audit.DayCount{Day: d.Day, Partial: d.Partial})
		}
		f := &fleet[i]
		f.Decisions += d.Decisions
		f.Unsigned += d.Unsigned
		f.Refused += d.Refused
		f.WouldRefuse += d.WouldRefuse
		f.ByVerdict.Admitted += d.ByVerdict.Admitted
		f.ByVerdict.AdmittedUnsigned += d.ByVerdict.AdmittedUnsigned
		f.ByVerdict.WouldRefuse += d.ByVerdict.WouldRefuse
		f.ByVerdict.Refused += d.ByVerdict.Refused
		f.Partial = f.Partial || d.Partial
	}
	return fleet
}

// fleetTrust says what the fleet audit rests on: the authority log's key
// and each runner's decision log key, as the fleet file gives them, and
// the first root.
func fleetTrust(rep *audit.FleetReport) []string {
	var lines []string
	first := true
	for _, r := range rep.Runners {
		if r.Report == nil || r.Report.Trust == nil {
			continue
		}
		t := r.Report.Trust
		if first && t.Authority != nil {
			lines = append(lines, fmt.Sprintf("authority log key %s (key id %s), given in the fleet file", t.Authority.Name, t.Authority.KeyID))
		}
		if t.Decisions != nil {
			lines = append(lines, fmt.Sprintf("runner %s: decision log key %s (key id %s), given in the fleet file", r.Name, t.Decisions.Name, t.Decisions.KeyID))
		}
		if first {
			first = false
			switch {
			case t.TrustRoot != "":
				lines = append(lines, "first root "+t.TrustRoot+" as given with --trust-root")
			case t.FirstRoot != "":
				lines = append(lines, "first root "+t.FirstRoot+" trusted on first use (no --trust-root)")
			}
		}
	}
	return lines
}

var fleetPage = template.Must(template.New("fleet").Funcs(template.FuncMap{
	"sub":   func(a, b int) int { return a - b },
	"num":   humanize.Thousands,
	"clock": clockShort,
	"short": shortKey,
}).Parse(pageHead + fleetHTML + detailsHTML))
