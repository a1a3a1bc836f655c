package auditview

import (
	"bytes"
	"slices"
	"testing"

	"github.com/writ-ledger/writ/verify/audit"
)

// TestRender: a failed audit renders as nothing; a good one, and a fleet
// whatever its outcome, as exactly what the Format asks: the page when
// asked, then the CSV table or the text report, never both.
func TestRender(t *testing.T) {
	good := &audit.Report{OK: true, ByVerdict: map[string]int64{"admitted": 2}, ByRule: map[string]int64{}, Decisions: 2, Traffic: &audit.Traffic{}}
	failed := &audit.Report{ByVerdict: map[string]int64{}, ByRule: map[string]int64{}, Traffic: &audit.Traffic{}, Failure: &audit.Failure{Log: "authority"}}
	fleet := &audit.FleetReport{Runners: []audit.RunnerReport{{Name: "r1", OK: true, Report: good}, {Name: "r2"}}}
	page, _ := HTML(good, "v1")
	table, _ := CSV(good)
	fleetPage, _ := FleetHTML(fleet, "")
	fleetTable, _ := FleetCSV(fleet)
	for _, tc := range []struct {
		name  string
		fleet bool
		rep   *audit.Report
		f     Format
		want  Output
	}{
		{name: "failed", rep: failed, f: Format{CSV: true, HTML: true}, want: Output{}},
		{name: "text", rep: good, want: Output{Text: Text(good)}},
		{name: "csv and page", rep: good, f: Format{CSV: true, HTML: true, Version: "v1"}, want: Output{Page: page, CSV: table}},
		{name: "fleet text", fleet: true, want: Output{Text: FleetText(fleet)}},
		{name: "fleet csv and page", fleet: true, f: Format{CSV: true, HTML: true}, want: Output{Page: fleetPage, CSV: fleetTable}},
	} {
		var got Output
		var err error
		if tc.fleet {
			got, err = RenderFleet(fleet, tc.f)
		} else {
			got, err = Render(tc.rep, tc.f)
		}
		if err != nil || !bytes.Equal(got.Page, tc.want.Page) || !bytes.Equal(got.CSV, tc.want.CSV) || !slices.Equal(got.Text, tc.want.Text) {
			t.Errorf("%s: got %+v, %v", tc.name, got, err)
		}
		if len(got.Text) > 0 && got.CSV != nil {
			t.Errorf("%s: both text and CSV", tc.name)
		}
	}
}
