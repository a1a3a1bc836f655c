package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/auditview"
	"github.com/writ-ledger/writ/ledger/formats"
)

// writ runs the command line and returns its stdout, failing the test on
// a non-zero exit.
func writ(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(append([]string{"writ"}, args...), strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("writ %s exited %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// auditPage writes the audit page of dir with args and returns it.
func auditPage(t *testing.T, dir string, args ...string) string {
	t.Helper()
	page := filepath.Join(t.TempDir(), "page.html")
	writ(t, append([]string{"audit", "--ledger", dir, "--html", page}, args...)...)
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAuditPageTrust: the Verified card says what the audit trusted. With
// the ledger's own keys it is amber and says they were taken from the
// ledger itself; with the keys given it is green and says so; the text
// report says the same.
func TestAuditPageTrust(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "L")
	monthLedger(t, dir, "month")
	t.Setenv("WRIT_PASSPHRASE", "month")
	avk := strings.TrimSpace(writ(t, "ledger", "vkey", "--dir", dir))
	dvk := strings.TrimSpace(writ(t, "ledger", "vkey", "--dir", dir, "--log", "decisions"))
	aid, did := vkeyID(t, avk), vkeyID(t, dvk)
	dorigin, _, _ := strings.Cut(dvk, "+")

	own := auditPage(t, dir)
	for _, want := range []string{
		`<div class="card verified amber">`,
		"<b>Trust:</b> <b>not independent</b>: " + auditview.NotIndependent + ".",
		"<li>authority log key example.com/month (key id " + aid + ") taken from the ledger itself, not independently trusted</li>",
		"<li>decision log key " + dorigin + " (key id " + did + ") taken from the ledger itself, not independently trusted</li>",
		"trusted on first use (no --trust-root)</li>",
	} {
		if !strings.Contains(own, want) {
			t.Errorf("with the ledger's own keys, the page lacks %q", want)
		}
	}
	given := auditPage(t, dir, "--vkey", avk, "--decisions-vkey", dvk)
	for _, want := range []string{
		`<div class="card verified ok">`,
		"<li>authority log key example.com/month (key id " + aid + ") given with --vkey</li>",
		"<li>decision log key " + dorigin + " (key id " + did + ") given with --decisions-vkey</li>",
	} {
		if !strings.Contains(given, want) {
			t.Errorf("with --vkey, the page lacks %q", want)
		}
	}
	if strings.Contains(given, "not independent") || strings.Contains(given, "taken from the ledger itself") {
		t.Error("with both keys given, the page still says a key was taken from the ledger")
	}
	text := writ(t, "audit", "--ledger", dir, "--vkey", avk)
	for _, want := range []string{
		"\ntrust: authority log key example.com/month (key id " + aid + ") given with --vkey\n",
		"\ntrust: decision log key " + dorigin + " (key id " + did + ") taken from the ledger itself, not independently trusted\n",
		"\ntrust: not independent: " + auditview.NotIndependent + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the text report lacks %q:\n%s", want, text)
		}
	}
}

func vkeyID(t *testing.T, vkey string) string {
	t.Helper()
	pub, err := formats.VerifierPublicKey(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return pub.ID()
}

// TestAuditPagePeriod: the period line gives both bounds to the second
// (a fraction of --since rounded up, as counted), the title and heading
// name the log and the days, and the by-day table runs over every day
// of the period, the quiet ones at both ends included, the first marked
// partial.
func TestAuditPagePeriod(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "L")
	monthLedger(t, dir, "month") // decisions on days 0..29 before now
	t.Setenv("WRIT_PASSPHRASE", "month")
	today := time.Now().UTC().Truncate(24 * time.Hour)
	since, until := today.AddDate(0, 0, -35).Add(500*time.Millisecond), today.AddDate(0, 0, 2)
	page := auditPage(t, dir, "--since", since.Format(time.RFC3339Nano), "--until", until.Format(time.RFC3339))
	day := func(t time.Time) string { return t.Format(time.DateOnly) }
	first, last := day(since), day(until.AddDate(0, 0, -1))
	for _, want := range []string{
		"<title>writ audit of example.com/month, " + first + " to " + last + "</title>",
		"<h1>writ audit of example.com/month, " + first + " to " + last + "</h1>",
		`<p class="muted" id="period">From ` + first + " 00:00:01 UTC to " + day(until) + " 00:00:00 UTC, by the time each runner recorded its decision.</p>",
		`<td class="day">` + first + ` <small class="muted">partial</small></td><td class="n" data-k="day:` + first + `">0</td>`,
		`<td class="day">` + last + `</td><td class="n" data-k="day:` + last + `">0</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, `data-k="day:`); n != 37 {
		t.Errorf("%d days in the table, want the period's 37", n)
	}
	if !regexp.MustCompile(`id="made">Report made \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC by writ `).MatchString(page) {
		t.Error("the page does not say when it was made, to the second")
	}
	// Without a period: from the first decision to the report's time.
	if !regexp.MustCompile(`id="period">From \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(the first decision\) to \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(the time of this report\)`).MatchString(auditPage(t, dir)) {
		t.Error("without a period, the page does not say from when to when it counts")
	}
}
