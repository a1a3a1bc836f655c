// Package auditviewtest checks an audit page against the report it
// shows, for the tests of package auditview and of the command line: the
// page as written, and, when Chromium is installed, as Chromium renders
// it at a desktop's and a small window's width.
package auditviewtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/writ-ledger/writ/verify/audit"
)

// dataK finds the counts of an audit page: data-k="dimension:key">N<,
// N with or without thousands separators.
var dataK = regexp.MustCompile(`data-k="([^":]+):([^"]*)"[^>]*>(\d{1,3}(?:,\d{3})*|\d+)<`)

// CheckPage compares every count on an audit page (each in an element
// with a data-k="dimension:key" attribute) with report, the report as
// --json prints it, and requires the page to show every count the report
// holds. The error names the first count that differs or is missing.
func CheckPage(page, report []byte) error {
	var rep audit.Report // read back from the --json output, not from the page's code
	if err := json.Unmarshal(report, &rep); err != nil {
		return err
	}
	if rep.Traffic == nil {
		return fmt.Errorf("the report has no traffic section")
	}
	t := rep.Traffic
	want := map[string]int64{
		"total:entries_verified": rep.EntriesVerified, "total:decisions": rep.Decisions, "total:unsigned": t.Unsigned,
		"total:would_refuse_under_enforce": rep.WouldRefuse, "total:flagged_builds_admitted": t.FlaggedBuildsTotal,
		"total:outside_period": t.OutsidePeriod, "total:authority_entries": rep.AuthorityEntries, "total:decision_entries": 0,
	}
	if rep.DecisionLog != nil {
		want["total:decision_entries"] = rep.DecisionLog.Size
	}
	if p := rep.Provenance; p != nil {
		want["total:pins_with_provenance"], want["total:pins_without_provenance"] = p.PinsWith, p.PinsWithout
		want["total:admitted_relying_on_provenance"], want["total:admitted_without_provenance"] = p.AdmittedRelying, p.AdmittedWithout
	}
	for name, m := range map[string]map[string]int64{"verdict": rep.ByVerdict, "rule": rep.ByRule, "mode": t.ByMode,
		"machine": t.ByMachine, "stream": t.ByStream, "signer": t.BySigner, "would_refuse_rule": t.WouldRefuseByRule} {
		for k, v := range m {
			want[name+":"+k] = v
		}
	}
	for _, d := range t.Days {
		want["day:"+d.Day], want["day_unsigned:"+d.Day] = d.Decisions, d.Unsigned
		want["day_refused:"+d.Day], want["day_would_refuse:"+d.Day] = d.Refused, d.WouldRefuse
		want["day_admitted:"+d.Day], want["day_admitted_unsigned:"+d.Day] = d.ByVerdict.Admitted, d.ByVerdict.AdmittedUnsigned
		want["day_would_refuse_verdict:"+d.Day] = d.ByVerdict.WouldRefuse
		if v := d.ByVerdict; v.Admitted+v.AdmittedUnsigned+v.WouldRefuse+v.Refused != d.Decisions || v.Refused != d.Refused {
			return fmt.Errorf("the report's day %s: verdicts %+v do not add up to %d decisions, %d refused", d.Day, v, d.Decisions, d.Refused)
		}
	}
	seen := map[string]bool{}
	for _, m := range dataK.FindAllSubmatch(page, -1) {
		k := string(m[1]) + ":" + string(m[2])
		n, _ := strconv.ParseInt(strings.ReplaceAll(string(m[3]), ",", ""), 10, 64)
		w, ok := want[k]
		if !ok || w != n {
			return fmt.Errorf("the page says %s = %d, the report says %d (present: %v)", k, n, w, ok)
		}
		seen[k] = true
	}
	for k := range want {
		if !seen[k] {
			return fmt.Errorf("the page does not show %s (%d)", k, want[k])
		}
	}
	return checkDetails(page, rep.ByRule)
}

// CheckFleetPage compares a fleet page's totals (data-k) with report, the
// fleet report as --json prints it, and requires each runner that
// verified to have its section and, for every rule it counts, a link to
// that rule's details. The error names the first difference.
func CheckFleetPage(page, report []byte) error {
	var rep audit.FleetReport
	if err := json.Unmarshal(report, &rep); err != nil {
		return err
	}
	t := rep.Total
	want := map[string]int64{"total:decisions": t.Decisions, "total:unsigned": t.Unsigned, "total:would_refuse_under_enforce": t.WouldRefuse,
		"total:refused": t.Refused, "total:flagged_builds_admitted": t.FlaggedBuilds}
	for k, v := range t.WouldRefuseByRule {
		want["would_refuse_rule:"+k] = v
	}
	seen := map[string]bool{}
	for _, m := range dataK.FindAllSubmatch(page, -1) {
		k := string(m[1]) + ":" + string(m[2])
		n, _ := strconv.ParseInt(strings.ReplaceAll(string(m[3]), ",", ""), 10, 64)
		if w, ok := want[k]; !ok || w != n {
			return fmt.Errorf("the fleet page says %s = %d, the report says %d (present: %v)", k, n, w, ok)
		}
		seen[k] = true
	}
	for k := range want {
		if !seen[k] {
			return fmt.Errorf("the fleet page does not show %s (%d)", k, want[k])
		}
	}
	for i, r := range rep.Runners {
		anchor := fmt.Sprintf("runner-%d", i)
		if !bytes.Contains(page, []byte(`<h2 id="`+anchor+`">`)) || !bytes.Contains(page, []byte(`href="#`+anchor+`"`)) {
			return fmt.Errorf("runner %s has no section linked from the table", r.Name)
		}
		if !r.OK || r.Report == nil {
			continue
		}
		for rule := range r.Report.ByRule {
			if !bytes.Contains(page, []byte(`href="#`+anchor+`-rule-`+rule+`"`)) || !bytes.Contains(page, []byte(`id="`+anchor+`-rule-`+rule+`"`)) {
				return fmt.Errorf("runner %s: its count of rule %s does not link to its details", r.Name, rule)
			}
		}
	}
	return nil
}

// detailsTable finds a rule's details table and the decisions it lists.
var detailsTable = regexp.MustCompile(`(?s)<table class="list details" data-rule="([^"]+)">(.*?)</table>`)

// checkDetails requires, for every rule counted, a link from its count
// to its details table (id rule-RULE), and a table that lists as many
// decisions as the rule counts, or the first audit.DetailsPerRule.
func checkDetails(page []byte, byRule map[string]int64) error {
	rows := map[string]int{}
	for _, m := range detailsTable.FindAllSubmatch(page, -1) {
		rows[string(m[1])] = bytes.Count(m[2], []byte(`<tbody class="decision">`))
	}
	for rule, n := range byRule {
		if !bytes.Contains(page, []byte(`href="#rule-`+rule+`"`)) || !bytes.Contains(page, []byte(`id="rule-`+rule+`"`)) {
			return fmt.Errorf("the count of rule %s does not link to its details", rule)
		}
		if got, want := rows[rule], int(min(n, audit.DetailsPerRule)); got != want {
			return fmt.Errorf("the details of rule %s list %d decisions, want %d", rule, got, want)
		}
	}
	if len(rows) != len(byRule) {
		return fmt.Errorf("the page has details for %d rules, the report counts %d", len(rows), len(byRule))
	}
	return nil
}

// errNoChromium is Chromium's error when the browser is required
// (WRIT_REQUIRE_CHROMIUM is set, as CI sets it) and not installed.
var errNoChromium = errors.New("chromium is required (WRIT_REQUIRE_CHROMIUM) and not installed")

// Chromium returns the path of the chromium browser on $PATH, or "" when
// there is none and WRIT_REQUIRE_CHROMIUM is not set: the caller then
// checks the page as written only. A browser required and missing is
// errNoChromium, so that CI fails instead of skipping the rendered check.
func Chromium() (string, error) {
	browser, err := exec.LookPath("chromium")
	if err == nil {
		return browser, nil
	}
	if os.Getenv("WRIT_REQUIRE_CHROMIUM") != "" {
		return "", errNoChromium
	}
	return "", nil
}

// CheckRendered renders the page at path (whose bytes are page) in the
// Chromium at browser: its DOM must give report's numbers (CheckPage)
// with no console message, and laid out at a desktop's and a small
// window's width (1280 and 800 px) nothing may stick out to the right
// and no machine name (class machine) may break over two lines. A
// copy of the page (the page itself runs no script) measures every
// element once loaded. work is a scratch directory; fatalf is called on
// the first failure and must not return (testing.T.Fatalf).
func CheckRendered(fatalf func(string, ...any), work, browser, path string, page, report []byte) {
	out, errb := chromiumDOM(fatalf, work, browser, path, 1280)
	for _, line := range strings.Split(errb, "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Uncaught") || strings.Contains(line, "Content Security Policy") {
			fatalf("console message while rendering the page: %s", line)
		}
	}
	if err := CheckPage(out, report); err != nil {
		fatalf("as rendered: %v", err)
	}
	CheckLayout(fatalf, work, browser, page)
}

// CheckLayout lays out page in the Chromium at browser at a desktop's
// and a small window's width (1280 and 800 px): nothing may stick out to
// the right, and no machine name (class machine) may break over two
// lines. A copy of the page (the page itself runs no script) measures
// every element once loaded; work is a scratch directory.
func CheckLayout(fatalf func(string, ...any), work, browser string, page []byte) {
	measured := filepath.Join(work, "page-measured.html")
	probe := bytes.Replace(page, []byte(`<meta http-equiv="Content-Security-Policy"`), []byte(`<meta name="removed-csp"`), 1)
	probe = bytes.Replace(probe, []byte("</body>"), []byte(overflowProbe+"</body>"), 1)
	if err := os.WriteFile(measured, probe, 0o644); err != nil {
		fatalf("%v", err)
	}
	for _, width := range []int{1280, 800} {
		dom, _ := chromiumDOM(fatalf, work, browser, measured, width)
		m := overflowResult.FindSubmatch(dom)
		if m == nil {
			fatalf("at %d px: the overflow probe left no result", width)
		}
		if got := string(m[1]); got != "none" {
			fatalf("at %d px the page is laid out wrong (overflows to the right, or breaks a machine name): %s", width, got)
		}
	}
}

// overflowProbe marks the body with the elements whose right edge passes
// the viewport's (at most five), or "none".
const overflowProbe = `<script>addEventListener("load", () => {
const w = document.documentElement.clientWidth, out = [];
if (document.documentElement.scrollWidth > w) out.push("document " + document.documentElement.scrollWidth + " > " + w);
for (const el of document.querySelectorAll("body *")) {
  const r = el.getBoundingClientRect();
  if (r.right > w + 0.5 && out.length < 5) out.push(el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined ? "." + el.className : "") + " right " + Math.round(r.right) + " > " + w);
}
for (const el of document.querySelectorAll(".machine")) {
  const r = document.createRange(); r.selectNodeContents(el);
  if (new Set(Array.from(r.getClientRects(), x => Math.round(x.top))).size > 1 && out.length < 5) out.push("machine name broken over lines: " + el.textContent);
}
document.body.setAttribute("data-overflow", out.join("; ") || "none");
});</script>`

var overflowResult = regexp.MustCompile(`data-overflow="([^"]*)"`)

// chromiumDOM renders the page at path in headless Chromium with a
// window width px wide and returns the DOM after load, and its log.
func chromiumDOM(fatalf func(string, ...any), work, browser, path string, width int) ([]byte, string) {
	profile := filepath.Join(work, "chromium-profile")
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		fmt.Sprintf("--window-size=%d,1000", width), "--virtual-time-budget=5000",
		"--user-data-dir="+profile, "--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+path)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		fatalf("chromium: %v", err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			fatalf("chromium: %v\n%s", err, errb.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		fatalf("chromium did not finish in 60 s")
	}
	return out.Bytes(), errb.String()
}
