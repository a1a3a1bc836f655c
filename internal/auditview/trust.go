package auditview

import (
	"fmt"
	"time"

	"github.com/writ-ledger/writ/verify/audit"
)

// keySource says where an audit took a log's key from, for people; flag
// is the flag that gives it.
func keySource(k *audit.TrustedKey, flag string) string {
	switch k.Source {
	case audit.KeyGiven:
		return "given with " + flag
	case audit.KeyState:
		return "remembered in the state file"
	}
	return "taken from the ledger itself, not independently trusted"
}

// trustLines say what the audit's verification rests on: each log's key
// and where it came from, and the first root; the same on the page and in
// the text report.
func trustLines(rep *audit.Report) []string {
	t := rep.Trust
	if t == nil {
		return nil
	}
	var lines []string
	for _, k := range []struct {
		log, flag string
		key       *audit.TrustedKey
	}{{"authority log", "--vkey", t.Authority}, {"decision log", "--decisions-vkey", t.Decisions}} {
		if k.key != nil {
			lines = append(lines, fmt.Sprintf("%s key %s (key id %s) %s", k.log, k.key.Name, k.key.KeyID, keySource(k.key, k.flag)))
		}
	}
	switch {
	case t.TrustRoot != "":
		lines = append(lines, "first root "+t.TrustRoot+" as given with --trust-root")
	case t.FirstRoot != "":
		lines = append(lines, "first root "+t.FirstRoot+" trusted on first use (no --trust-root)")
	}
	return lines
}

// NotIndependent is the warning, on the page and in the text report,
// when a log's key came from the ledger itself (audit.KeyLedger).
const NotIndependent = "a key was taken from the ledger itself: this shows the ledger is self-consistent, not whose it is; a directory rewritten with its keys replaced would verify as well (give --vkey and --decisions-vkey, or keep a --state file)"

// clock formats an RFC 3339 time from the report as people read it, to
// the second: 2026-11-29 10:00:00 UTC.
func clock(rfc3339 string) string {
	t, err := time.Parse(time.RFC3339, rfc3339)
	if err != nil {
		return rfc3339
	}
	return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
}

// clockShort is clock without the zone, for columns headed "UTC".
func clockShort(rfc3339 string) string {
	if t, err := time.Parse(time.RFC3339, rfc3339); err == nil {
		return t.UTC().Format("2006-01-02 15:04:05")
	}
	return rfc3339
}

// periodBounds are the report's period as people read it: from --since
// (else the first decision counted) to --until (else the audit's time).
func periodBounds(rep *audit.Report) (from, to string) {
	t := rep.Traffic
	switch {
	case t.Since != "":
		from = clock(t.Since)
	case t.FirstDecision != "":
		from = clock(t.FirstDecision) + " (the first decision)"
	default:
		from = "the start of the ledger"
	}
	if t.Until != "" {
		return from, clock(t.Until)
	}
	return from, clock(rep.AuditedAt) + " (the time of this report)"
}

// periodText is the period line of the text report.
func periodText(rep *audit.Report) string {
	from, to := periodBounds(rep)
	return fmt.Sprintf("period: from %s to %s; %d decisions counted, %d outside it (verified, not counted)", from, to, rep.Decisions, rep.Traffic.OutsidePeriod)
}
