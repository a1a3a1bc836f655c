package auditview

import (
	"strings"
	"testing"

	"github.com/writ-ledger/writ/verify/audit"
)

// TestAuditLinesEscape: text from the ledger (a revocation's reason) is
// printed with control characters escaped: it cannot clear a terminal or
// forge a line of the report.
func TestAuditLinesEscape(t *testing.T) {
	rep := &audit.Report{ByVerdict: map[string]int64{}, ByRule: map[string]int64{}, Traffic: &audit.Traffic{
		AuthorityEventsTotal: 1,
		AuthorityEvents:      []audit.AuthorityEvent{{Index: 7, Kind: "revocation", Time: "2026-11-29T10:00:00Z", Subject: "k (ok\x1b[2J\rFAKE: audit ok\nnext)"}},
	}}
	out := strings.Join(trafficLines(rep), "\n")
	if strings.ContainsAny(out, "\x1b\r") || strings.Contains(out, "\nnext") || strings.Contains(out, "\nFAKE") {
		t.Fatalf("control characters reached the output:\n%q", out)
	}
	if !strings.Contains(out, `\u001b[2J`) {
		t.Fatalf("the escape is not shown escaped:\n%s", out)
	}
}

// TestTextWords: the text report names its counts in words, never by
// their JSON field names.
func TestTextWords(t *testing.T) {
	rep := &audit.Report{ByVerdict: map[string]int64{"admitted": 1}, ByRule: map[string]int64{"ok": 1}, Traffic: &audit.Traffic{
		ByMode: map[string]int64{"warn": 1}, WouldRefuseByRule: map[string]int64{"unsigned": 1}, BySigner: map[string]int64{"none": 1},
	}}
	out := strings.Join(Text(rep), "\n")
	for _, field := range []string{"would_refuse_rule", "by_signer", "flagged_builds", "authority_events"} {
		if strings.Contains(out, field) {
			t.Errorf("the text report prints the field name %s:\n%s", field, out)
		}
	}
	if !strings.Contains(out, "decisions by the rule enforce would have refused them on (admitted under off or warn):") {
		t.Errorf("the would-refuse counts are not named in words:\n%s", out)
	}
}
