package auditview

import (
	"slices"

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

// dimension is the report's counts by one attribute (Name, as in the
// CSV's dimension column and the page's data-k), by the attribute's
// value.
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
