package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/writ-ledger/writ/verify"
)

// dataK finds the counts of an audit page: data-k="dimension:key">N<.
var dataK = regexp.MustCompile(`data-k="([^":]+):([^"]*)"[^>]*>(\d+)<`)

// checkPage compares every count on an audit page with the --json report
// and requires the main ones to be there.
func checkPage(page, report []byte) error {
	var rep verify.Report // read back from the --json output, not from the page's code
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
	}
	if t.OutsidePeriod > 0 {
		want["total:outside_period"] = t.OutsidePeriod
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
	}
	seen := map[string]bool{}
	for _, m := range dataK.FindAllSubmatch(page, -1) {
		k := string(m[1]) + ":" + string(m[2])
		n, _ := strconv.ParseInt(string(m[3]), 10, 64)
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
	return nil
}

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
	ts.Check(checkPage(page, report))
	browser, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("WRIT_REQUIRE_CHROMIUM") != "" {
			ts.Fatalf("chromium is required (WRIT_REQUIRE_CHROMIUM) and not installed")
		}
		ts.Logf("chromium not installed: the page was checked as written, not as rendered")
		return
	}
	profile := filepath.Join(ts.MkAbs("."), "chromium-profile")
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+profile, "--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+ts.MkAbs(args[0]))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	ts.Check(cmd.Start())
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			ts.Fatalf("chromium: %v\n%s", err, errb.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		ts.Fatalf("chromium did not finish in 60 s")
	}
	for _, line := range strings.Split(errb.String(), "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Uncaught") || strings.Contains(line, "Content Security Policy") {
			ts.Fatalf("console message while rendering the page: %s", line)
		}
	}
	ts.Check(checkPage(out.Bytes(), report))
}
