package testvectors

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"filippo.io/age"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

func loadAdmission(t *testing.T) Admission {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("data", AdmissionFile))
	if err != nil {
		t.Fatal(err)
	}
	var f Admission
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", AdmissionFile, err)
	}
	return f
}

// TestAdmissionVectors: every published case reaches its declared verdict
// and rule through writ's own path: the export imported and replayed
// (runner.ImportLedger), the authority loaded under the case's verifier
// key, and the dispatch judged by verify.Admit under the case's runner.
func TestAdmissionVectors(t *testing.T) {
	f := loadAdmission(t)
	auths := map[string]*verify.Authority{}
	for _, l := range f.Ledgers {
		auth, log, err := LoadAdmissionLedger(l, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { log.Close() })
		auths[l.Name] = auth
	}
	names := map[string]bool{}
	for _, c := range f.Cases {
		if names[c.Name] {
			t.Errorf("case %s: name used twice", c.Name)
		}
		names[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			auth := auths[c.Ledger]
			if auth == nil {
				t.Fatalf("no ledger %q", c.Ledger)
			}
			if _, ok := verify.LookupRule(c.Expect.Rule); !ok {
				t.Fatalf("rule %q is not in verify's vocabulary", c.Expect.Rule)
			}
			v, err := AdmitCase(auth.State, c, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if string(v.Verdict) != c.Expect.Verdict || v.Rule != c.Expect.Rule {
				t.Errorf("got %s %s, want %s %s; findings %v", v.Verdict, v.Rule, c.Expect.Verdict, c.Expect.Rule, v.Failed)
			}
			// The case fails exactly the checks it declares, so its
			// rule is reached by the precedence alone, whatever order
			// an implementation checks in.
			if got := failedRules(v); !slices.Equal(got, c.Expect.Failed) {
				t.Errorf("failed %q, want %q: %v", got, c.Expect.Failed, v.Failed)
			}
		})
	}
}

// TestAdmissionCoverage: the cases reach every verdict, and refuse under
// enforce for each rule the vectors are meant to pin down.
func TestAdmissionCoverage(t *testing.T) {
	verdicts := map[string]bool{}
	refused := map[string]bool{}
	refusedOff := map[string]bool{}
	multi := false
	for _, c := range loadAdmission(t).Cases {
		verdicts[c.Expect.Verdict] = true
		if c.Runner.Mode == "enforce" && c.Expect.Verdict == string(verify.Refused) {
			refused[c.Expect.Rule] = true
		}
		if c.Runner.Mode == "off" && c.Expect.Verdict == string(verify.Refused) {
			refusedOff[c.Expect.Rule] = true
		}
		multi = multi || len(c.Expect.Failed) > 1
	}
	if !multi {
		t.Error("no case fails more than one check: precedence is not pinned down")
	}
	// The rules that refuse in every mode are refused under off too.
	for _, r := range []string{rules.BadSignature, rules.WrongMachine, rules.AgentDigestMismatch,
		rules.Quarantined, rules.MalformedDispatch} {
		if !refusedOff[r] {
			t.Errorf("no case refuses under off for %s", r)
		}
	}
	for _, v := range schemas.Verdicts {
		if !verdicts[string(v)] {
			t.Errorf("no case reaches %s", v)
		}
	}
	for _, r := range []string{rules.Unsigned, rules.UnknownKey, rules.OutOfScope, rules.OutsideWindow,
		rules.Revoked, rules.WrongMachine, rules.AgentNotPinned, rules.AgentDigestMismatch,
		rules.Expired, rules.Quarantined, rules.MalformedDispatch, rules.UnknownBuild,
		rules.BadSignature, rules.NotYetValid, rules.PinExpired, rules.NoDelegation} {
		if !refused[r] {
			t.Errorf("no case refuses under enforce for %s", r)
		}
	}
}

// TestAdmissionVectorsRunner: the same cases through the runner `writ
// admit` opens (runner.AdmitAtLedger over a ledger directory the export
// was imported into, with a fresh runner key and decision log per case,
// so no case sees another's history): the verdict is recorded, and it is
// the declared one.
func TestAdmissionVectorsRunner(t *testing.T) {
	if testing.Short() {
		t.Skip("imports the export once per case")
	}
	f := loadAdmission(t)
	ledgers := map[string]AdmissionLedger{}
	for _, l := range f.Ledgers {
		ledgers[l.Name] = l
	}
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			l := ledgers[c.Ledger]
			dir := t.TempDir()
			path := filepath.Join(dir, "export")
			if err := os.WriteFile(path, l.Export, 0o600); err != nil {
				t.Fatal(err)
			}
			ldir := filepath.Join(dir, "ledger")
			if _, err := runner.ImportLedger(ldir, path, map[string]*formats.LogKey{"authority": testLogKey(t, l.AuthorityVKey)}, l.TrustRoot); err != nil {
				t.Fatal(err)
			}
			id, err := age.GenerateX25519Identity()
			if err != nil {
				t.Fatal(err)
			}
			kp := ledgerdir.KeyParams{Recipients: []age.Recipient{id.Recipient()}, Identities: []age.Identity{id}, Rand: rand.Reader}
			files := filepath.Join(dir, "files")
			if err := os.Mkdir(files, 0o700); err != nil {
				t.Fatal(err)
			}
			cfg, d, err := prepareCase(c, files)
			if err != nil {
				t.Fatal(err)
			}
			v, _, err := runner.AdmitAtLedger(ldir, verify.Trust{VKey: testLogKey(t, l.AuthorityVKey), TrustRoot: l.TrustRoot}, kp, cfg, d)
			if err != nil {
				t.Fatal(err)
			}
			if string(v.Verdict) != c.Expect.Verdict || v.Rule != c.Expect.Rule {
				t.Errorf("got %s %s, want %s %s; findings %v", v.Verdict, v.Rule, c.Expect.Verdict, c.Expect.Rule, v.Failed)
			}
			if got := failedRules(v); !slices.Equal(got, c.Expect.Failed) {
				t.Errorf("failed %q, want %q: %v", got, c.Expect.Failed, v.Failed)
			}
		})
	}
}

// failedRules returns the rule ids of v's findings, in order.
func failedRules(v *verify.Verdict) []string {
	out := []string{}
	for _, f := range v.Failed {
		out = append(out, f.Rule)
	}
	return out
}
