package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/audit"
	"github.com/writ-ledger/writ/verify/runner"
)

// publishedFleet publishes the authority log of a runnerLedger and one
// decision log per name (each under its own runner key, holding two
// decisions bound to the authority log's checkpoint, the second of bad's
// to a root the log never had), and returns the fleet file naming them.
func publishedFleet(t *testing.T, names []string, bad string) []byte {
	t.Helper()
	l := newRunnerLedger(t)
	pub := t.TempDir()
	auth, err := ledger.OpenReadOnly(filepath.Join(l.dir, ledgerdir.AuthorityDir))
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	head, err := auth.SignedHead()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runner.PublishVerified(auth, filepath.Join(pub, "authority"), runner.PublishOptions{Authority: true}); err != nil {
		t.Fatal(err)
	}
	fleet := fmt.Sprintf("authority %s %s\n", filepath.Join(pub, "authority"), auth.VerifierKey())
	for i, name := range names {
		key := testkit.Key(t, byte(70+i))
		dec, err := ledger.Create(filepath.Join(t.TempDir(), "decisions"), runnerOrigin+"/decisions/"+key.Public().ID()[:16], key, nil)
		if err != nil {
			t.Fatal(err)
		}
		for j := range 2 {
			v := verify.RefuseLedger(verify.Config{Machine: name, Mode: verify.ModeOff, Now: func() time.Time { return testkit.Epoch }},
				verify.Dispatch{Raw: []byte("x")}, rules.LedgerUnverified, os.ErrInvalid)
			v.AuthoritySize, v.AuthorityRoot = head.Size, hexOf(head.Hash[:])
			if name == bad && j == 1 {
				v.AuthorityRoot = strings.Repeat("00", 32)
			}
			b, err := schemas.Encode(verify.Decision(v))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := dec.Append([][]byte{b}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := runner.PublishVerified(dec, filepath.Join(pub, name), runner.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
		fleet += fmt.Sprintf("runner %s %s %s\n", name, filepath.Join(pub, name), dec.VerifierKey())
		dec.Close()
	}
	return []byte(fleet)
}

// TestFleetVerifiesAuthorityOnce: a fleet audit verifies and replays the
// authority log once, not once per runner: its progress counts the
// authority log's entries once and every decision log's, and never more.
// Each runner's report, or failure, is exactly the one a full audit of
// the runner's directory in the cache (Run of Dir, which verifies the
// authority log again) makes: a bad runner fails as before, at its
// decision, and the others verify.
func TestFleetVerifiesAuthorityOnce(t *testing.T) {
	names := []string{"r1", "r2", "bad", "r3"}
	f, err := audit.ParseFleet(publishedFleet(t, names, "bad"))
	if err != nil {
		t.Fatal(err)
	}
	type call struct{ done, total int64 }
	var calls []call
	now := func() time.Time { return testkit.Epoch.Add(time.Hour) }
	o := audit.Options{Now: now, Progress: func(done, total int64) { calls = append(calls, call{done, total}) }}
	cache := t.TempDir()
	rep, err := audit.RunFleet(context.Background(), f, cache, o, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	const authEntries, decisions = 5, 2
	want := int64(authEntries + decisions*len(names))
	if len(calls) == 0 || calls[len(calls)-1] != (call{want, want}) {
		t.Fatalf("progress %v, want it to end at %d of %d: the authority log once, each decision log once", calls, want, want)
	}
	for _, c := range calls {
		if c.done > c.total || c.total != want {
			t.Fatalf("progress %v: past %d entries, the authority log counted again", calls, want)
		}
	}
	if rep.OK || rep.Failure != nil || rep.Authority == nil || rep.Authority.Size != authEntries {
		t.Fatalf("fleet report: ok %v, failure %+v, authority %+v", rep.OK, rep.Failure, rep.Authority)
	}
	if got := rep.Refusal().Message; got != "fleet audit failed: 1 of 4 runners' decision logs did not verify (see the report)" {
		t.Errorf("refusal %q", got)
	}
	for i, rr := range rep.Runners {
		ro := audit.Options{AuthorityVKey: f.Authority.VKey, DecisionsVKey: f.Runners[i].VKey, Now: now}
		full, err := audit.Run(audit.Dir(filepath.Join(cache, "runners", rr.Name)), ro)
		if err != nil {
			t.Fatal(err)
		}
		if rr.Name == "bad" {
			if rr.OK || rr.Report != nil || rr.Failure == nil || rr.Failure.Log != "decisions" || rr.Failure.Index != 1 {
				t.Fatalf("bad runner: %+v", rr)
			}
			if got, want := jsonOf(t, rr.Failure), jsonOf(t, full.Failure); got != want {
				t.Errorf("bad runner's failure\n%s\nwant, as a full audit of its directory reports it,\n%s", got, want)
			}
			continue
		}
		if !rr.OK || rr.Report.EntriesVerified != authEntries+decisions || rr.Report.AuthorityEntries != authEntries {
			t.Fatalf("runner %s: %+v, %+v", rr.Name, rr, rr.Report)
		}
		if got, want := jsonOf(t, rr.Report), jsonOf(t, full); got != want {
			t.Errorf("runner %s's report\n%s\nwant, as a full audit of its directory makes it,\n%s", rr.Name, got, want)
		}
	}
	if rep.Total.Decisions != int64(decisions*(len(names)-1)) {
		t.Errorf("total decisions %d", rep.Total.Decisions)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
