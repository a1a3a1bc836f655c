package verify

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/transfer"
	"golang.org/x/mod/semver"
)

// role is what a binary is for: its rule ids and its name in reasons.
type role struct {
	name                                         string
	notPinned, pinMismatch, unreadable, mismatch string
}

var (
	agentRole  = role{"agent", RuleAgentNotPinned, RuleAgentPinMismatch, RuleAgentBinaryMissing, RuleAgentDigestMismatch}
	engineRole = role{"engine", RuleEngineNotPinned, RuleEnginePinMismatch, RuleEngineBinaryMissing, RuleEngineDigestMismatch}
)

// checkBinary checks the binary the runner would execute in role against
// the latest pin for ref's artifact on this platform: the pin's signer
// still holds pin, the pin is unexpired, no rollback below this runner's
// high-water mark (unless a downgrade record allows it), the digest the
// instruction names (if any) is the pin's, the file on disk hashes to the
// pin's digest here, its build metadata (read from the file, not the pin)
// is the pin's, and it is neither dirty nor of unknown source.
func (a *admission) checkBinary(r role, ref schemas.ArtifactRef, path string) {
	pin := a.st.LatestPin(ref.Name, a.cfg.Platform)
	if pin == nil {
		a.fail(r.notPinned, "no pin for %s artifact %q on %s in this ledger", r.name, ref.Name, a.cfg.Platform)
		return
	}
	a.checkPinSigner(pin)
	if a.now.Unix() >= pin.Record.Expires {
		a.fail(RulePinExpired, "the %s pin at ledger index %d for %s %s expired at %s", r.name, pin.Index, pin.Record.Artifact, pin.Record.Version, unixUTC(pin.Record.Expires))
	}
	a.checkRollback(pin)
	if ref.Digest != "" && ref.Digest != pin.Record.Digest {
		a.fail(r.pinMismatch, "instruction.%s.digest is %s, the latest pin (ledger index %d) is %s", r.name, ref.Digest, pin.Index, pin.Record.Digest)
	}
	if path == "" {
		a.fail(r.unreadable, "no %s binary path was given to compare with the pin", r.name)
		return
	}
	actual, err := transfer.Compare(path, pin.Record.Digest)
	var mm *transfer.MismatchError
	switch {
	case errors.As(err, &mm):
		a.v.Compared = append(a.v.Compared, schemas.DigestCheck{Subject: r.name, Expected: mm.Expected, Actual: mm.Actual})
		a.fail(r.mismatch, "%s binary %s hashes to %s here; the pin at ledger index %d for %s %s says %s", r.name, path, mm.Actual, pin.Index, pin.Record.Artifact, pin.Record.Version, mm.Expected)
		return
	case err != nil:
		a.fail(r.unreadable, "%s binary: %v", r.name, err)
		return
	}
	a.v.Compared = append(a.v.Compared, schemas.DigestCheck{Subject: r.name, Expected: pin.Record.Digest, Actual: actual})
	a.pass(r.name + "-digest")
	a.checkBuild(r, path, pin)
	a.admittedPins = append(a.admittedPins, pin.Record)
}

// checkBuild re-reads the build metadata from the file on disk and holds
// it against the pin, then flags dirty and unknown builds.
func (a *admission) checkBuild(r role, path string, pin *delegation.PinEntry) {
	build, _, err := transfer.ReadBuild(path)
	if err != nil {
		a.fail(r.unreadable, "%s binary build metadata: %v", r.name, err)
		return
	}
	if !sameBuild(build, pin.Record.Build) {
		a.fail(RuleBuildMismatch, "the %s binary's build metadata (%s) is not the pin's (%s)", r.name, describeBuild(build), describeBuild(pin.Record.Build))
		return
	}
	switch {
	case build == nil || build.Revision == "":
		a.fail(RuleUnknownBuild, "the %s binary %s records no source revision (%s)", r.name, pin.Record.Version, describeBuild(build))
	case build.Modified:
		a.fail(RuleDirtyBuild, "the %s binary %s was built from a modified tree (vcs.modified=true, revision %s)", r.name, pin.Record.Version, build.Revision)
	default:
		a.pass(r.name + "-build")
	}
}

func sameBuild(x, y *schemas.Build) bool {
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	return *x == *y
}

func describeBuild(b *schemas.Build) string {
	if b == nil {
		return "no Go build information"
	}
	s := b.GoVersion + " " + b.Path
	if b.Revision != "" {
		s += " " + b.VCS + " " + b.Revision
	}
	if b.Modified {
		s += " modified"
	}
	return s
}

// checkRollback refuses a pin below this runner's high-water mark for the
// artifact, unless a root-signed downgrade record allows that version.
func (a *admission) checkRollback(pin *delegation.PinEntry) {
	high := a.cfg.HighWater[pin.Record.Artifact]
	if high == "" || semver.Compare(pin.Record.Version, high) >= 0 {
		a.pass("no-rollback")
		return
	}
	if d := a.st.Downgrade(pin.Record.Artifact, pin.Record.Version, a.now.Unix()); d != nil {
		a.pass("downgrade-allowed")
		return
	}
	a.fail(RuleRollback, "the latest pin for %s is %s, below %s, which this runner has admitted; no downgrade record allows it",
		pin.Record.Artifact, pin.Record.Version, high)
}

// checkProvision hashes every provisioned file here and compares it with
// the digest the instruction names; the provision directory, when given,
// holds exactly the files the instruction names and nothing else.
func (a *admission) checkProvision(instr *schemas.Instruction, dir string) {
	if dir != "" {
		a.checkProvisionDir(instr, dir)
	}
	if len(instr.Provision) == 0 {
		return
	}
	if dir == "" {
		a.fail(RuleProvisionMissing, "the instruction provisions %d files and no provision directory was given", len(instr.Provision))
		return
	}
	for _, p := range instr.Provision {
		path := filepath.Join(dir, strings.TrimPrefix(p.Dest, ".provision/"))
		actual, err := transfer.Compare(path, p.Digest)
		var mm *transfer.MismatchError
		switch {
		case errors.As(err, &mm):
			a.v.Compared = append(a.v.Compared, schemas.DigestCheck{Subject: p.Dest, Expected: mm.Expected, Actual: mm.Actual})
			a.fail(RuleProvisionMismatch, "%s hashes to %s here; the instruction says %s", p.Dest, mm.Actual, mm.Expected)
		case err != nil:
			a.fail(RuleProvisionMissing, "%s: %v", p.Dest, err)
		default:
			a.v.Compared = append(a.v.Compared, schemas.DigestCheck{Subject: p.Dest, Expected: p.Digest, Actual: actual})
		}
	}
	if !a.failedAny(RuleProvisionMismatch, RuleProvisionMissing) {
		a.pass("provision")
	}
}

// checkProvisionDir refuses a provision directory holding anything the
// instruction does not name: an unnamed file would reach the agent
// unchecked.
func (a *admission) checkProvisionDir(instr *schemas.Instruction, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		a.fail(RuleProvisionMissing, "provision directory: %v", err)
		return
	}
	named := map[string]bool{}
	for _, p := range instr.Provision {
		named[strings.TrimPrefix(p.Dest, ".provision/")] = true
	}
	for _, e := range entries {
		if !named[e.Name()] {
			a.fail(RuleProvisionMismatch, "the provision directory holds %q, which the instruction does not name", e.Name())
		}
	}
}

// checkLedgerAge refuses a ledger whose newest checkpoint is older than
// the runner's configured maximum age.
func (a *admission) checkLedgerAge() {
	if a.cfg.MaxLedgerAge == 0 {
		return
	}
	switch {
	case a.cfg.LedgerTime.IsZero():
		a.fail(RuleStaleLedger, "the ledger's checkpoint carries no signed time, so its age cannot be judged (maximum %s)", a.cfg.MaxLedgerAge)
	case a.now.Sub(a.cfg.LedgerTime) > a.cfg.MaxLedgerAge:
		a.fail(RuleStaleLedger, "the ledger's newest checkpoint was signed at %s, %s ago; this runner accepts at most %s",
			a.cfg.LedgerTime.UTC().Format(time.RFC3339), a.now.Sub(a.cfg.LedgerTime).Round(time.Second), a.cfg.MaxLedgerAge)
	default:
		a.pass("ledger-fresh")
	}
}

func (a *admission) failedAny(rules ...string) bool {
	for _, f := range a.v.Failed {
		for _, r := range rules {
			if f.Rule == r {
				return true
			}
		}
	}
	return false
}

// checkPinSigner asks whether the key that signed the pin may still pin
// this artifact now: a pin stands only while its signer's delegation
// does, so a release key's authority never outlives its window through a
// long-lived (or back-dated) pin.
func (a *admission) checkPinSigner(pin *delegation.PinEntry) {
	key, ok := a.st.Key(pin.Signer)
	if !ok {
		panic("pin signer not in the state") // Apply admitted the pin with this key
	}
	_, err := a.st.Authorize(delegation.Request{Key: key, Action: "pin", Artifact: pin.Record.Artifact, At: a.now})
	var d *delegation.Denial
	if errors.As(err, &d) {
		a.fail(d.Rule, "the pin at ledger index %d is no longer backed by its signer: %s", pin.Index, d.Reason)
		return
	}
	a.pass("pin-authority")
}
