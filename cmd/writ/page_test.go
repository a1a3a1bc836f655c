package main

import (
	"os"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/writ-ledger/writ/internal/auditview/auditviewtest"
)

// cmdPageMatches checks an audit page against the --json report, as
// written and, when Chromium is there, as Chromium renders it (with no
// console message): page-matches PAGE REPORT.json
// CI sets WRIT_REQUIRE_CHROMIUM so that a missing browser fails.
func cmdPageMatches(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: page-matches PAGE REPORT.json")
	}
	page, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	report, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	ts.Check(auditviewtest.CheckPage(page, report))
	browser, err := auditviewtest.Chromium()
	ts.Check(err)
	if browser == "" {
		ts.Logf("chromium not installed: the page was checked as written, not as rendered")
		return
	}
	auditviewtest.CheckRendered(ts.Fatalf, ts.MkAbs("."), browser, ts.MkAbs(args[0]), page, report)
}

// cmdFleetPageMatches checks a fleet audit page against the --json fleet
// report (auditviewtest.CheckFleetPage) and, when Chromium is there, its
// layout at 1280 and 800 px: fleet-page-matches PAGE REPORT.json
func cmdFleetPageMatches(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: fleet-page-matches PAGE REPORT.json")
	}
	page, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	report, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	ts.Check(auditviewtest.CheckFleetPage(page, report))
	browser, err := auditviewtest.Chromium()
	ts.Check(err)
	if browser == "" {
		ts.Logf("chromium not installed: the fleet page was checked as written, not as rendered")
		return
	}
	auditviewtest.CheckLayout(ts.Fatalf, ts.MkAbs("."), browser, page)
}
