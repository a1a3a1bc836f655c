package auditview_test

import (
	"fmt"

	"github.com/writ-ledger/writ/internal/auditview"
	"github.com/writ-ledger/writ/verify/audit"
)

// The CSV of a report: totals, then the counts by each dimension, then
// the days.
func ExampleCSV() {
	rep := &audit.Report{OK: true, Decisions: 3,
		ByVerdict: map[string]int64{"admitted": 2, "refused": 1},
		ByRule:    map[string]int64{"ok": 2, "agent-digest-mismatch": 1},
		Traffic: &audit.Traffic{ByMode: map[string]int64{"enforce": 3}, ByMachine: map[string]int64{"runner-1": 3},
			Days: []audit.DayCount{{Day: "2026-11-29", Decisions: 3, Refused: 1}}},
	}
	out, err := auditview.CSV(rep)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))
	// Output:
	// dimension,key,count
	// total,decisions,3
	// total,unsigned,0
	// total,would_refuse_under_enforce,0
	// total,flagged_builds_admitted,0
	// total,outside_period,0
	// verdict,admitted,2
	// verdict,admitted-unsigned,0
	// verdict,refused,1
	// verdict,would-refuse,0
	// rule,agent-digest-mismatch,1
	// rule,ok,2
	// mode,enforce,3
	// machine,runner-1,3
	// day,2026-11-29,3
	// day_unsigned,2026-11-29,0
	// day_refused,2026-11-29,1
	// day_would_refuse,2026-11-29,0
}
