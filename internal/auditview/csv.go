package auditview

import (
	"bytes"
	"encoding/csv"
	"strconv"

	"github.com/writ-ledger/writ/verify/audit"
)

// CSV is the report of a good audit as one table with a header row:
// dimension, key, count. Totals come as total rows, the period's bounds
// (when given) as period rows with the time in the count column, days as
// day, day_unsigned, day_refused and day_would_refuse rows. The error is
// the CSV writer's.
func CSV(rep *audit.Report) ([]byte, error) {
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
