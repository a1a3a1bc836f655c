package auditview

import "github.com/writ-ledger/writ/verify/audit"

// Format says how a report is to be rendered: as CSV rather than as the
// text report, and whether as an HTML page too. Version names the writ
// that made the page (HTML's version).
type Format struct {
	CSV     bool
	HTML    bool
	Version string
}

// Output is a report rendered as a Format asked: the HTML page (nil
// unless asked), and for stdout either the CSV table (CSV asked) or the
// text report's lines.
type Output struct {
	Page []byte
	CSV  []byte
	Text []string
}

// Render renders the report of one ledger's audit: a failed audit
// (rep.OK false) as nothing, its failure being the caller's to report; a
// good one as f asks (HTML, CSV, Text). The error is the CSV writer's or
// the page template's.
func Render(rep *audit.Report, f Format) (Output, error) {
	var out Output
	var err error
	if !rep.OK {
		return out, nil
	}
	if f.HTML {
		if out.Page, err = HTML(rep, f.Version); err != nil {
			return Output{}, err
		}
	}
	if f.CSV {
		out.CSV, err = CSV(rep)
		return out, err
	}
	out.Text = Text(rep)
	return out, nil
}

// RenderFleet renders a fleet audit's report as f asks (FleetHTML,
// FleetCSV, FleetText), whether or not the audit was OK: the report says
// which runners failed. The error is the CSV writer's or the page
// template's.
func RenderFleet(rep *audit.FleetReport, f Format) (Output, error) {
	var out Output
	var err error
	if f.HTML {
		if out.Page, err = FleetHTML(rep, f.Version); err != nil {
			return Output{}, err
		}
	}
	if f.CSV {
		out.CSV, err = FleetCSV(rep)
		return out, err
	}
	out.Text = FleetText(rep)
	return out, nil
}
