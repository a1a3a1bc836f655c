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
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify"
)

// world is an authority state with a root, an operator who may instruct
// "demo" on runner-*, and a release engineer who may pin "agent" and
// "engine"; pins are added with pin.
type world struct {
	st            *delegation.State
	root, op, rel *sign.PrivateKey
	lastPin       []byte // the envelope of the latest pin, as appended
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{st: delegation.NewState(), root: testkit.Key(t, 1), op: testkit.Key(t, 10), rel: testkit.Key(t, 11)}
	relDel := testkit.Delegation(w.rel, []string{"pin"}, "", "")
	relDel.Artifacts = []string{"agent", "engine"}
	w.apply(t,
		testkit.Seal(t, testkit.Root(1, w.root), w.root),
		testkit.Seal(t, testkit.Delegation(w.op, []string{"instruct"}, "demo", "runner-*"), w.root),
		testkit.Seal(t, relDel, w.root))
	return w
}

func (w *world) apply(t *testing.T, entries ...[]byte) {
	t.Helper()
	for _, e := range entries {
		if _, err := w.st.Apply(e, testkit.Epoch); err != nil {
			t.Fatal(err)
		}
	}
}

// pin pins the file at path as artifact at version (allowing dirty and
// unknown builds: the pin records what it saw), valid for 30 days from
// an hour before Epoch, and returns the pin.
func (w *world) pin(t *testing.T, path, artifact, version string) *schemas.Pin {
	t.Helper()
	p, err := transfer.NewPin(path, transfer.PinOptions{Artifact: artifact, Version: version, Platform: platform,
		AllowDirty: true, AllowUnknown: true,
		IssuedAt: testkit.Epoch.Add(-time.Hour), Expires: testkit.Epoch.Add(30 * 24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	w.lastPin = testkit.Seal(t, p, w.rel)
	w.apply(t, w.lastPin)
	return p
}

func (w *world) admit(t *testing.T, mode verify.Mode, hw map[string]string, i *schemas.Instruction, d verify.Dispatch) *verify.Verdict {
	t.Helper()
	c := cfg(mode)
	c.HighWater = verify.MarkMap(hw)
	d.Raw = testkit.Seal(t, i, w.op)
	return verify.Admit(w.st, c, d)
}

// expect asserts the verdict in each of off, warn and enforce.
func expect(t *testing.T, w *world, hw map[string]string, i *schemas.Instruction, d verify.Dispatch, rule string, verdicts [3]schemas.Verdict) {
	t.Helper()
	for n, mode := range []verify.Mode{verify.ModeOff, verify.ModeWarn, verify.ModeEnforce} {
		v := w.admit(t, mode, hw, i, d)
		if v.Rule != rule || v.Verdict != verdicts[n] {
			t.Fatalf("mode %s: %s / %s (%s), want %s / %s; failed %v", mode, v.Verdict, v.Rule, v.Reason, verdicts[n], rule, v.Failed)
		}
	}
	assertedRule(rule)
}

var admittedAll = [3]schemas.Verdict{verify.Admitted, verify.Admitted, verify.Admitted}

// TestBuildsPinAndAdmit: real Go binaries built in the test from a
// temporary git repository, and a non-Go file. Each gets its pin outcome
// (writ pin refuses dirty and unknown builds unless allowed) and its own
// admission rule, so that warn and enforce treat them apart.
func TestBuildsPinAndAdmit(t *testing.T) {
	notGo := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(notGo, []byte("#!/bin/sh\necho agent\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		path     string
		pinErr   error // from writ pin without --allow-dirty / --allow-unknown-build
		rule     string
		verdicts [3]schemas.Verdict
	}{
		{"clean", agentPath, nil, rules.OK, admittedAll},
		{"uncommitted edit (vcs.modified=true)", testkit.BuildAgent(t, testkit.BuildOptions{Dirty: true}), transfer.ErrDirtyBuild, rules.DirtyBuild, softAll},
		{"-buildvcs=false", testkit.BuildAgent(t, testkit.BuildOptions{NoVCS: true}), transfer.ErrUnknownBuild, rules.UnknownBuild, softAll},
		{"stripped (-ldflags=-s -w keeps build info)", testkit.BuildAgent(t, testkit.BuildOptions{LDFlags: "-s -w"}), nil, rules.OK, admittedAll},
		{"not a Go binary", notGo, transfer.ErrUnknownBuild, rules.UnknownBuild, softAll},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := transfer.NewPin(tc.path, transfer.PinOptions{Artifact: "agent", Version: "1.0.0", Platform: platform,
				IssuedAt: testkit.Epoch, Expires: testkit.Epoch.Add(time.Hour)})
			if !errors.Is(err, tc.pinErr) || (tc.pinErr == nil) != (err == nil) {
				t.Fatalf("pin: %v, want %v", err, tc.pinErr)
			}
			w := newWorld(t)
			p := w.pin(t, tc.path, "agent", "1.0.0")
			if tc.pinErr == transfer.ErrDirtyBuild && (p.Build == nil || !p.Build.Modified) {
				t.Fatalf("the allowed dirty pin does not record vcs.modified: %+v", p.Build)
			}
			expect(t, w, nil, instr(nil), verify.Dispatch{AgentBinary: tc.path}, tc.rule, tc.verdicts)
		})
	}
}

// TestBuildMetadataReadFromDisk: the build metadata is re-read from the
// binary at admission, not taken from the pin, so a pin whose recorded
// build was edited (here: claims a clean build of a dirty binary) is
// refused under build-mismatch.
func TestBuildMetadataReadFromDisk(t *testing.T) {
	dirty := testkit.BuildAgent(t, testkit.BuildOptions{Dirty: true})
	p, err := transfer.NewPin(dirty, transfer.PinOptions{Artifact: "agent", Version: "1.0.0", Platform: platform, AllowDirty: true,
		IssuedAt: testkit.Epoch.Add(-time.Hour), Expires: testkit.Epoch.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	p.Build.Modified = false
	w := newWorld(t)
	w.apply(t, testkit.Seal(t, p, w.rel))
	v := w.admit(t, verify.ModeOff, nil, instr(nil), verify.Dispatch{AgentBinary: dirty})
	if v.Verdict != verify.Refused || v.Rule != rules.BuildMismatch {
		t.Fatalf("%s / %s (%s)", v.Verdict, v.Rule, v.Reason)
	}
}

// TestSignedSizeCompared: the size a pin or a provision entry signs is
// compared with the file before it is hashed; a file of another size is
// a mismatch in every mode, whatever its digest, and the reason gives
// both sizes. A size one byte off either way is enough.
func TestSignedSizeCompared(t *testing.T) {
	fi, err := os.Stat(agentPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, delta := range []int64{-1, 1} {
		w := newWorld(t)
		p, err := transfer.NewPin(agentPath, transfer.PinOptions{Artifact: "agent", Version: "1.0.0", Platform: platform,
			IssuedAt: testkit.Epoch.Add(-time.Hour), Expires: testkit.Epoch.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		p.Size = uint64(fi.Size() + delta) // the right digest, a wrong size
		w.apply(t, testkit.Seal(t, p, w.rel))
		expect(t, w, nil, instr(nil), verify.Dispatch{AgentBinary: agentPath}, rules.AgentDigestMismatch, refusedAll)
		v := w.admit(t, verify.ModeOff, nil, instr(nil), verify.Dispatch{AgentBinary: agentPath})
		if want := fmt.Sprintf("is %d bytes here; the pin at ledger index 3 for agent v1.0.0 says %d bytes", fi.Size(), fi.Size()+delta); !strings.Contains(v.Reason, want) {
			t.Errorf("reason %q lacks %q", v.Reason, want)
		}
	}
	w := newWorld(t)
	w.pin(t, agentPath, "agent", "1.0.0")
	prov := t.TempDir()
	body := []byte(`{"allow":[]}`)
	if err := os.WriteFile(filepath.Join(prov, "policy.json"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, size := range []uint64{11, 13} {
		i := instr(func(i *schemas.Instruction) {
			i.Provision = []schemas.Provision{{Dest: ".provision/policy.json", Digest: schemas.SHA256Digest(body), Size: size}}
		})
		expect(t, w, nil, i, verify.Dispatch{AgentBinary: agentPath, ProvisionDir: prov}, rules.ProvisionMismatch, refusedAll)
		v := w.admit(t, verify.ModeOff, nil, i, verify.Dispatch{AgentBinary: agentPath, ProvisionDir: prov})
		if want := fmt.Sprintf(".provision/policy.json is 12 bytes here; the instruction says %d bytes", size); !strings.Contains(v.Reason, want) {
			t.Errorf("reason %q lacks %q", v.Reason, want)
		}
	}
}

// TestPinOfEndedKeyDoesNotShadow: a pin stands only while its signer
// holds pin. Once the key of the latest pin has lost its delegation (its
// window ended, or it was revoked), the latest pin that still stands is
// in force: its binary is admitted, and the ended key's binary is a
// digest mismatch in every mode, never admitted with a warning.
func TestPinOfEndedKeyDoesNotShadow(t *testing.T) {
	other := filepath.Join(t.TempDir(), "other")
	body, err := os.ReadFile(agentPath)
	if err != nil {
		t.Fatal(err)
	}
	body[len(body)-1] ^= 1
	if err := os.WriteFile(other, body, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"window ended", "key revoked"} {
		t.Run(how, func(t *testing.T) {
			w := newWorld(t)
			w.pin(t, agentPath, "agent", "1.0.0")
			short := testkit.Key(t, 14)
			del := testkit.Delegation(short, []string{"pin"}, "", "")
			del.NotAfter = testkit.Epoch.Add(time.Hour).Unix()
			w.apply(t, testkit.Seal(t, del, w.root))
			p, err := transfer.NewPin(other, transfer.PinOptions{Artifact: "agent", Version: "1.1.0", Platform: platform,
				AllowDirty: true, AllowUnknown: true, IssuedAt: testkit.Epoch.Add(-time.Minute), Expires: testkit.Epoch.Add(30 * 24 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			w.apply(t, testkit.Seal(t, p, short))
			at := testkit.Epoch
			if how == "window ended" {
				at = testkit.Epoch.Add(2 * time.Hour)
			} else {
				w.apply(t, testkit.Seal(t, &schemas.Revocation{V: 1, Target: short.Public().ID(), Reason: "compromised", IssuedAt: testkit.Epoch.Unix()}, w.root))
			}
			for _, mode := range []verify.Mode{verify.ModeOff, verify.ModeWarn, verify.ModeEnforce} {
				c := cfg(mode)
				c.Now = func() time.Time { return at }
				i := instr(func(i *schemas.Instruction) {
					i.NotBefore, i.Expires = at.Add(-time.Minute).Unix(), at.Add(time.Hour).Unix()
				})
				v := verify.Admit(w.st, c, verify.Dispatch{Raw: testkit.Seal(t, i, w.op), AgentBinary: other})
				if v.Verdict != verify.Refused || v.Rule != rules.AgentDigestMismatch {
					t.Fatalf("%s: the ended key's binary: %s/%s (%s)", mode, v.Verdict, v.Rule, v.Reason)
				}
				v = verify.Admit(w.st, c, verify.Dispatch{Raw: testkit.Seal(t, i, w.op), AgentBinary: agentPath})
				if !v.Admitted() || v.Rule != rules.OK {
					t.Fatalf("%s: the standing pin's binary: %s/%s (%s)", mode, v.Verdict, v.Rule, v.Reason)
				}
			}
		})
	}
}
