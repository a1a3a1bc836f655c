package audit

import (
	"slices"
	"strings"
	"time"

	"github.com/writ-ledger/writ/delegation"
)

const day = 24 * time.Hour

// finish lays out the days of the period and computes the unsigned share;
// now is the audit's clock, the end of an open period.
func (tr *Traffic) finish(total int64, o Options, now time.Time) {
	counted := make([]DayCount, 0, len(tr.days))
	for _, dc := range tr.days {
		counted = append(counted, *dc)
	}
	slices.SortFunc(counted, func(a, b DayCount) int { return strings.Compare(a.Day, b.Day) })
	if len(counted) > 0 {
		tr.FirstDecision, tr.LastDecision = unixUTC(tr.first), unixUTC(tr.last)
	}
	// The period's bounds, in Unix seconds: [start, end).
	start, end := tr.first, now.Unix()
	if !o.Since.IsZero() {
		start = ceilUnix(o.Since)
	}
	if !o.Until.IsZero() {
		end = ceilUnix(o.Until)
	}
	if len(counted) > 0 {
		start, end = min(start, tr.first), max(end, tr.last+1)
	} else if o.Since.IsZero() || end <= start {
		tr.Days = counted
		return
	}
	// Days without decisions are days too: an outage shows as a gap, and
	// so do quiet days at either end of the period.
	first := time.Unix(start, 0).UTC().Truncate(day)
	last := time.Unix(end-1, 0).UTC().Truncate(day)
	if int(last.Sub(first)/day)+1 > maxDays && len(counted) > 0 {
		first, _ = time.Parse(time.DateOnly, counted[0].Day)
		last, _ = time.Parse(time.DateOnly, counted[len(counted)-1].Day)
		start, end = first.Unix(), last.Add(day).Unix()
	}
	tr.Days = counted
	if span := int(last.Sub(first)/day) + 1; span <= maxDays {
		filled := make([]DayCount, 0, span)
		for d, i := first, 0; !d.After(last); d = d.Add(day) {
			if name := d.Format(time.DateOnly); i < len(counted) && counted[i].Day == name {
				filled = append(filled, counted[i])
				i++
			} else {
				filled = append(filled, DayCount{Day: name})
			}
		}
		tr.Days = filled
	}
	if n := len(tr.Days); n > 0 {
		tr.Days[0].Partial = start%86400 != 0 && !o.Since.IsZero()
		tr.Days[n-1].Partial = tr.Days[n-1].Partial || end%86400 != 0
	}
	if total > 0 {
		tr.UnsignedShare = float64(tr.Unsigned) / float64(total)
	}
}

// firstRoot is the digest of the first root record st holds, "" when none.
func firstRoot(st *delegation.State) string {
	if roots := st.Roots(); len(roots) > 0 {
		return roots[0].Digest
	}
	return ""
}
