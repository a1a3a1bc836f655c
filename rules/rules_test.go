package rules_test

import (
	"strings"
	"testing"

	"github.com/writ-ledger/writ/rules"
)

// TestVocabulary: ids are unique and non-empty, every rule says what it
// checks, every rule has a next act for where it can fail, and Lookup and
// Admission read the one table.
func TestVocabulary(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range rules.All {
		if r.ID == "" || seen[r.ID] {
			t.Errorf("rule id %q empty or repeated", r.ID)
		}
		seen[r.ID] = true
		if r.Summary == "" {
			t.Errorf("%s: no summary", r.ID)
		}
		if r.NextAct == "" && r.AppendAct == "" && r.ReportAct == "" && r.StoreAct == "" && r.ID != rules.NotSupportedYet {
			t.Errorf("%s: no next act anywhere", r.ID)
		}
		if got, ok := rules.Lookup(r.ID); !ok || got != r {
			t.Errorf("Lookup(%s) = %v, %v", r.ID, got, ok)
		}
		if r.Always && !r.Class.Governed() {
			t.Errorf("%s: Always on a class the mode does not govern", r.ID)
		}
	}
	// The refusals of an operator's trust assertion, and of a report that
	// verified nothing, say what to do outside admission too.
	for _, id := range []string{rules.RootUntrusted, rules.VKeyMismatch, rules.LedgerUnwitnessed, rules.NothingVerified} {
		if r, _ := rules.Lookup(id); r.ReportAct == "" {
			t.Errorf("%s: a sync, import or audit can refuse under it, and it has no ReportAct", id)
		}
	}
	if _, ok := rules.Lookup("no-such-rule"); ok {
		t.Error("Lookup of an unknown id succeeded")
	}
	adm := rules.Admission()
	if len(adm) == 0 || adm[0].ID != rules.OK || adm[len(adm)-1].ID != rules.Internal {
		t.Errorf("admission rules start %v and end %v; want ok first and internal-error last", adm[0].ID, adm[len(adm)-1].ID)
	}
	// The record rules a ledger append can refuse under each say what to do.
	for _, id := range []string{rules.Malformed, rules.BadSignature, rules.UnknownKey, rules.Threshold, rules.WrongKind, rules.NotAttenuated,
		rules.RootVersion, rules.UnknownTarget, rules.Duplicate, rules.NoDelegation, rules.OutOfScope, rules.OutsideWindow,
		rules.Revoked, rules.RootExpired, rules.RootKey, rules.IssuedAt, rules.Superseded} {
		if r, _ := rules.Lookup(id); r.AppendAct == "" {
			t.Errorf("%s: a record can be refused under it, and it has no AppendAct", id)
		}
	}
}

// TestListing: a rule's listing says whether the mode governs it.
func TestListing(t *testing.T) {
	for _, r := range rules.All {
		l := r.Listing()
		if l.Rule != r.ID || l.Class != r.Class || l.Governed != r.Governed() || l.Summary != r.Summary || l.NextAct != r.NextActIn("off") {
			t.Fatalf("%s: %+v", r.ID, l)
		}
	}
}

// TestNextActIn: advice for before tightening to enforce follows the
// next act under off and warn, never under enforce.
func TestNextActIn(t *testing.T) {
	r, _ := rules.Lookup(rules.Unsigned)
	for mode, want := range map[string]bool{"off": true, "warn": true, "enforce": false} {
		if got := strings.Contains(r.NextActIn(mode), "before tightening to enforce"); got != want {
			t.Errorf("mode %s: %q", mode, r.NextActIn(mode))
		}
	}
}
