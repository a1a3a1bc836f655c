package auditview

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/verify/audit"
)

// pct is n as a share of of, in percent to one decimal: "12.5%".
func pct(n, of int64) string {
	if of == 0 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

// ruleList is m's counts by rule, in rule order: "unsigned 3, expired
// 1", or "none".
func ruleList(m map[string]int64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
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

// fleetView is a fleet report as the page and the tables show it: a row
// a runner, then the total.
type fleetView struct {
	Rep   *audit.FleetReport
	Rows  []fleetRow
	Total fleetRow
}

// newFleetView lays out rep's rows.
func newFleetView(rep *audit.FleetReport) fleetView {
	var rows []fleetRow
	for _, r := range rep.Runners {
		row := fleetRow{Name: r.Name, OK: r.OK, Status: "verified"}
		if !r.OK {
			row.Status = "FAILED"
			if r.Failure != nil {
				row.Failure = humanize.OneLine(fmt.Sprintf("%s log: %s", r.Failure.Log, r.Failure.Error))
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
	return fleetView{Rep: rep, Rows: rows, Total: total}
}

// FleetText is the text report of a fleet audit, one line a string: the
// authority checkpoint, the authority log's failure if it failed, a line
// a runner (its counts, or why its decision log did not verify), then
// the total over the runners that verified. Text from the logs is
// escaped (humanize.OneLine).
func FleetText(rep *audit.FleetReport) []string {
	v := newFleetView(rep)
	var lines []string
	if rep.Authority != nil {
		lines = append(lines, fmt.Sprintf("authority checkpoint: %s size %d root %s", rep.Authority.Origin, rep.Authority.Size, rep.Authority.RootHash))
	}
	if rep.Failure != nil {
		status := "FAILED"
		if rep.Failure.Rule == rules.NothingVerified {
			status = "NOT CHECKED"
		}
		lines = append(lines, humanize.OneLine(rep.Failure.Log+" log: "+status+": "+rep.Failure.Error))
	}
	for _, r := range append(v.Rows, v.Total) {
		if !r.OK && r.Name != "total" {
			lines = append(lines, fmt.Sprintf("runner %s: FAILED: %s", r.Name, r.Failure))
			continue
		}
		who := "runner " + r.Name
		if r.Name == "total" {
			who = fmt.Sprintf("total (%s verified)", humanize.Plural(int64(countOK(rep)), "runner", "runners"))
		}
		lines = append(lines, fmt.Sprintf("%s: %d decisions, unsigned %d (%s), refused %d, would-refuse under enforce %d (%s), flagged builds admitted %d",
			who, r.Decisions, r.Unsigned, r.Share, r.Refused, r.WouldRefuse, r.ByRule, r.Flagged))
	}
	return lines
}

// countOK is how many of rep's runners verified.
func countOK(rep *audit.FleetReport) int {
	n := 0
	for _, r := range rep.Runners {
		if r.OK {
			n++
		}
	}
	return n
}

// FleetCSV is a fleet report as one table with a header row: runner,
// dimension, key, count. Each runner and the total have a status row
// (verified or failed, no count) and total rows; the runners that
// verified, and the total, have would_refuse_by_rule rows. The error is
// the CSV writer's.
func FleetCSV(rep *audit.FleetReport) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"runner", "dimension", "key", "count"})
	v := newFleetView(rep)
	for _, r := range append(v.Rows, v.Total) {
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
			for _, k := range slices.Sorted(maps.Keys(r.Report.Traffic.WouldRefuseByRule)) {
				w.Write([]string{r.Name, "would_refuse_by_rule", k, strconv.FormatInt(r.Report.Traffic.WouldRefuseByRule[k], 10)})
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(rep.Total.WouldRefuseByRule)) {
		w.Write([]string{"total", "would_refuse_by_rule", k, strconv.FormatInt(rep.Total.WouldRefuseByRule[k], 10)})
	}
	w.Flush()
	return b.Bytes(), w.Error()
}
