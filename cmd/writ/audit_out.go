package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify/audit"
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
func dimensions(rep *audit.Report) []dimension {
	verdicts := map[string]int64{}
	for _, v := range schemas.Verdicts {
		verdicts[string(v)] = rep.ByVerdict[string(v)]
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

// Header is the dimension's column header: the attribute's name.
func (d dimension) Header() string {
	if d.Name == "would_refuse_rule" {
		return "rule"
	}
	return d.Name
}

// Keys is Counts' keys in order, for the template.
func (d dimension) Keys() []string { return sortedKeys(d.Counts) }

// auditLines is the readable report after a good audit.
func auditLines(rep *audit.Report) []string {
	t := rep.Traffic
	var lines []string
	lines = append(lines, periodText(rep))
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
	lines = append(lines, fmt.Sprintf("admitted while flagged dirty or unknown: %d%s", t.FlaggedBuildsTotal, listedText(len(t.FlaggedBuilds), t.FlaggedBuildsTotal)))
	for _, f := range t.FlaggedBuilds {
		lines = append(lines, oneLine(fmt.Sprintf("  decision %d %s %s %s on %s instruction %s %s", f.Decision, f.Time, f.Verdict, f.Rule, f.Machine, f.Instruction, f.Digest)))
	}
	lines = append(lines, fmt.Sprintf("authority that ended: %d%s", t.AuthorityEventsTotal, listedText(len(t.AuthorityEvents), t.AuthorityEventsTotal)))
	for _, e := range t.AuthorityEvents {
		// The subject carries a revocation's reason: text from the ledger,
		// printed with control characters escaped.
		lines = append(lines, "  "+oneLine(fmt.Sprintf("entry %d %s %s %s", e.Index, e.Time, e.Kind, e.Subject)))
	}
	return lines
}

// listedText is "" when a list holds all of its total, else what it
// leaves out: the report lists at most audit.MaxListed.
func listedText(listed int, total int64) string {
	if int64(listed) >= total {
		return ""
	}
	return fmt.Sprintf(" (the first %d listed: a report lists at most %d; narrow the period with --since and --until for the rest)", listed, audit.MaxListed)
}

// auditCSV is the report as one table: dimension, key, count. Days come
// as day, day_unsigned, day_refused and day_would_refuse rows.
func auditCSV(rep *audit.Report) ([]byte, error) {
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
