package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/writ-ledger/writ/internal/auditview/auditviewtest"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// monthLedger makes a ledger whose decision log holds a month of
// decisions: uneven days, days without any, every verdict, flagged
// builds with their 64-hex digests, 40 machines. The authority log holds
// its root only; both logs verify.
func monthLedger(t *testing.T, dir, pass string) {
	t.Helper()
	rec, err := sign.ScryptRecipient([]byte(pass), sign.MinWorkFactor)
	if err != nil {
		t.Fatal(err)
	}
	id, err := sign.ScryptIdentity([]byte(pass))
	if err != nil {
		t.Fatal(err)
	}
	kp := ledgerdir.KeyParams{Recipients: []age.Recipient{rec}, Identities: []age.Identity{id}, Rand: rand.Reader}
	auth, err := ledgerdir.Init(dir, "example.com/month", kp)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	root := testkit.Key(t, 1)
	r := &schemas.Root{V: 1, Version: 1, Keys: [][]byte{root.Public().Raw()}, Threshold: 1,
		IssuedAt: now.Add(-time.Hour).Unix(), Expires: now.Add(365 * 24 * time.Hour).Unix()}
	if _, err := auth.Append([][]byte{testkit.Seal(t, r, root)}); err != nil {
		t.Fatal(err)
	}
	auth.Close()
	dec, err := ledgerdir.OpenDecisions(dir, "example.com/month", kp)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	verdicts := schemas.Verdicts
	rules := []string{"ok", "unsigned", "unknown-build", "agent-digest-mismatch"}
	var batch [][]byte
	for i := range 1200 {
		day := (i*7 + i/13) % 30
		if day%9 == 4 {
			continue // a day without decisions
		}
		v := (i + day) % 4
		d := &schemas.Decision{V: 1, Time: now.Add(-time.Duration(day) * 24 * time.Hour).Unix(), Machine: fmt.Sprintf("runner-%02d", i%40),
			Mode: []string{"off", "off", "warn", "enforce"}[v], Verdict: verdicts[v], Rule: rules[v],
			InstructionID: fmt.Sprintf("%032x", i), InstructionDigest: "sha256:" + strings.Repeat("ab", 32), Stream: "team/" + []string{"build", "deploy", "ops"}[i%3]}
		if v == 2 {
			d.Failed = []string{"unknown-build"}
			d.Compared = []schemas.DigestCheck{{Subject: "agent", Expected: "sha256:" + strings.Repeat("cd", 32), Actual: "sha256:" + strings.Repeat("cd", 32)}}
		}
		b, err := schemas.Encode(d)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, b)
	}
	if _, err := dec.Append(batch); err != nil {
		t.Fatal(err)
	}
}

// TestAuditPageMonth: the audit page of a month-long ledger gives the
// numbers of --json and, as Chromium renders it at 1280 and 800 px,
// overflows nowhere. With WRIT_PAGE_SCREENSHOTS=DIR it also leaves
// screenshots at both widths there, and the page, for a person to read.
func TestAuditPageMonth(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "L")
	monthLedger(t, dir, "month")
	t.Setenv("WRIT_PASSPHRASE", "month")
	var report, errb bytes.Buffer
	if code := run([]string{"writ", "--json", "audit", "--ledger", dir}, strings.NewReader(""), &report, &errb); code != 0 {
		t.Fatalf("audit --json exited %d: %s", code, errb.String())
	}
	page := filepath.Join(t.TempDir(), "month.html")
	if code := run([]string{"writ", "audit", "--ledger", dir, "--html", page}, strings.NewReader(""), &bytes.Buffer{}, &errb); code != 0 {
		t.Fatalf("audit --html exited %d: %s", code, errb.String())
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := auditviewtest.CheckPage(html, report.Bytes()); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(html, []byte("<script")) {
		t.Fatal("the page holds a script")
	}
	browser, err := auditviewtest.Chromium()
	if err != nil {
		t.Fatal(err)
	}
	if browser == "" {
		t.Skip("chromium not installed: the page was checked as written, not as rendered")
	}
	auditviewtest.CheckRendered(t.Fatalf, t.TempDir(), browser, page, html, report.Bytes())
	if shots := os.Getenv("WRIT_PAGE_SCREENSHOTS"); shots != "" {
		if err := os.WriteFile(filepath.Join(shots, "audit-month.html"), html, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{1280, 800} {
			cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", fmt.Sprintf("--window-size=%d,2600", w),
				"--user-data-dir="+filepath.Join(t.TempDir(), "profile"), fmt.Sprintf("--screenshot=%s/audit-month-%d.png", shots, w), "file://"+page)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("screenshot: %v\n%s", err, out)
			}
		}
	}
}
