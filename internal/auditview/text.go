package auditview

import (
	"fmt"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify/audit"
)

// Text is the text report of a good audit, one line a string: what was
// verified and against what, the counts by verdict and rule, then the
// period's traffic (see trafficLines). Text from the ledger is escaped
// (humanize.OneLine).
func Text(rep *audit.Report) []string {
	lines := []string{fmt.Sprintf("ok: %s verified (%d authority, %d decisions)", humanize.Plural(rep.EntriesVerified, "entry", "entries"), rep.AuthorityEntries, decisionEntries(rep))}
	if rep.Authority != nil {
		lines = append(lines, fmt.Sprintf("authority checkpoint: %s size %d root %s", rep.Authority.Origin, rep.Authority.Size, rep.Authority.RootHash))
	}
	if rep.Witnessing != nil {
		lines = append(lines, "authority checkpoint "+humanize.Witnessed(*rep.Witnessing))
	}
	if rep.DecisionLog != nil {
		lines = append(lines, fmt.Sprintf("decision checkpoint: %s size %d root %s", rep.DecisionLog.Origin, rep.DecisionLog.Size, rep.DecisionLog.RootHash))
	}
	if rep.RunnerKeyProtection != "" {
		lines = append(lines, "runner key protection: "+rep.RunnerKeyProtection)
	}
	for _, l := range trustLines(rep) {
		lines = append(lines, humanize.OneLine("trust: "+l)) // a key's name can come from the ledger
	}
	if rep.Trust == nil || !rep.Trust.Independent {
		lines = append(lines, "trust: not independent: "+NotIndependent)
	}
	lines = append(lines, fmt.Sprintf("admitted although a rule failed (enforce would refuse): %d", rep.WouldRefuse))
	lines = append(lines, "decisions by verdict:")
	for _, v := range schemas.Verdicts {
		lines = append(lines, fmt.Sprintf("  %-18s %d", v, rep.ByVerdict[string(v)]))
	}
	lines = append(lines, "decisions by rule:")
	for _, r := range sortedKeys(rep.ByRule) {
		lines = append(lines, fmt.Sprintf("  %-26s %d", r, rep.ByRule[r]))
	}
	return append(append(lines, trafficLines(rep)...), provenanceLines(rep)...)
}

// decisionEntries is the size of the decision log the audit verified, 0
// when it verified none.
func decisionEntries(rep *audit.Report) int64 {
	if rep.DecisionLog == nil {
		return 0
	}
	return rep.DecisionLog.Size
}

// trafficLines are the text report's lines on the period's decisions:
// the period, the unsigned share, the counts by mode, machine, stream,
// signer and the rule enforce would refuse on, the days, the flagged
// builds admitted and the authority that ended.
func trafficLines(rep *audit.Report) []string {
	t := rep.Traffic
	var lines []string
	lines = append(lines, periodText(rep))
	lines = append(lines, fmt.Sprintf("unsigned: %d of %d decisions (%.1f%%)", t.Unsigned, rep.Decisions, 100*t.UnsignedShare))
	for _, d := range dimensions(rep)[2:] {
		lines = append(lines, "decisions by "+d.Title()+":")
		for _, k := range d.Keys() {
			line := fmt.Sprintf("  %-26s %d", k, d.Counts[k])
			if l := rep.KeyLabels[k]; l != "" && d.Name == "signer" {
				line += "  (" + l + ")"
			}
			lines = append(lines, humanize.OneLine(line))
		}
	}
	lines = append(lines, "by day (UTC):  decisions  unsigned  refused  would-refuse")
	for _, d := range t.Days {
		lines = append(lines, fmt.Sprintf("  %s  %9d %9d %8d %13d", d.Day, d.Decisions, d.Unsigned, d.Refused, d.WouldRefuse))
	}
	lines = append(lines, fmt.Sprintf("admitted while flagged dirty or unknown: %d%s", t.FlaggedBuildsTotal, listedText(len(t.FlaggedBuilds), t.FlaggedBuildsTotal)))
	for _, f := range t.FlaggedBuilds {
		lines = append(lines, humanize.OneLine(fmt.Sprintf("  decision %d %s %s %s on %s instruction %s %s", f.Decision, f.Time, f.Verdict, f.Rule, f.Machine, f.Instruction, f.Digest)))
	}
	lines = append(lines, fmt.Sprintf("authority that ended: %d%s", t.AuthorityEventsTotal, listedText(len(t.AuthorityEvents), t.AuthorityEventsTotal)))
	for _, e := range t.AuthorityEvents {
		// The subject carries a revocation's reason: text from the ledger,
		// printed with control characters escaped.
		lines = append(lines, "  "+humanize.OneLine(fmt.Sprintf("entry %d %s %s %s", e.Index, e.Time, e.Kind, e.Subject)))
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
