package verify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/rules"
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
	agentRole  = role{"agent", rules.AgentNotPinned, rules.AgentPinMismatch, rules.AgentBinaryMissing, rules.AgentDigestMismatch}
	engineRole = role{"engine", rules.EngineNotPinned, rules.EnginePinMismatch, rules.EngineBinaryMissing, rules.EngineDigestMismatch}
)

// checkBinary checks the binary the runner would execute in role against
// the pin in force for ref's artifact on this platform (the latest whose
// signer still holds pin, delegation.State.LatestPin): the pin is
// unexpired, no rollback below this runner's
// high-water mark (unless a downgrade record allows it), the digest the
// instruction names (if any) is the pin's, the file on disk hashes to the
// pin's digest here, its build metadata (read from the file, not the pin)
// is the pin's, and it is neither dirty nor of unknown source. With no
// pin, the file is still hashed and held against the digest the
// instruction names, if any: a wrong byte is refused in every mode.
// checkDemand checks what the delegation under which the instruction's
// signer instructs demands of the binaries it runs (a.grant's builders):
// each pinned one (a pin in force) is pinned with provenance from one of
// them, else rules.ProvenanceRequired. A key with several delegations
// for the stream instructs under the one Authorize found.
func (a *admission) checkDemand() {
	g := a.grant
	if g == nil || len(g.Record.Builders) == 0 {
		return
	}
	for _, r := range []role{agentRole, engineRole} {
		p := a.pinned[r.name]
		if p == nil {
			continue // no pin stands: its own finding
		}
		if b := p.Builder(); !slices.ContainsFunc(g.Record.Builders, func(x schemas.Builder) bool { return x.Admits(b) }) {
			want := g.Record.Builders[0].String()
			if n := len(g.Record.Builders); n > 1 {
				want += fmt.Sprintf(" (or one of %d others)", n-1)
			}
			a.fail(rules.ProvenanceRequired, "the delegation at ledger index %d, under which key %s instructs, demands the %s be pinned with provenance from %s; the %s pin in force (%s %s) carries %s",
				g.Index, a.v.Signer, r.name, want, r.name, p.Artifact, p.Version, b)
			return
		}
	}
	a.pass("provenance-demand")
}

func (a *admission) checkBinary(r role, ref schemas.ArtifactRef, path string) {
	pin, denial := a.st.LatestPin(ref.Name, a.cfg.Platform, a.now)
	if pin == nil {
		a.fail(r.notPinned, "no pin for %s artifact %q on %s in this ledger", r.name, ref.Name, a.cfg.Platform)
		a.checkUnpinned(r, ref, path)
		return
	}
	if denial != nil {
		a.fail(denial.Rule, "the pin at ledger index %d is no longer backed by its signer, nor is any earlier pin of %s for %s: %s", pin.Index, ref.Name, a.cfg.Platform, denial.Reason)
	} else {
		a.pass("pin-authority")
		if a.pinned == nil {
			a.pinned = map[string]*schemas.Pin{}
		}
		a.pinned[r.name] = pin.Record
	}
	if a.now.Unix() >= pin.Record.Expires {
		a.fail(rules.PinExpired, "the %s pin at ledger index %d for %s %s expired at %s", r.name, pin.Index, pin.Record.Artifact, pin.Record.Version, unixUTC(pin.Record.Expires))
	}
	version := a.checkRollback(pin)
	if ref.Digest != "" && ref.Digest != pin.Record.Digest {
		a.fail(r.pinMismatch, "instruction.%s.digest is %s, the latest pin (ledger index %d) is %s", r.name, ref.Digest, pin.Index, pin.Record.Digest)
	}
	if path == "" {
		a.fail(r.unreadable, "no %s binary path was given to compare with the pin", r.name)
		return
	}
	if err := transfer.CheckSize(path, pin.Record.Size); err != nil {
		var se *transfer.SizeError
		if errors.As(err, &se) {
			a.fail(r.mismatch, "%s binary %s is %d bytes here; the pin at ledger index %d for %s %s says %d bytes", r.name, path, se.Actual, pin.Index, pin.Record.Artifact, pin.Record.Version, se.Expected)
		} else {
			a.fail(r.unreadable, "%s binary: %v", r.name, err)
		}
		return
	}
	alg, _, err := transfer.ParseDigest(pin.Record.Digest)
	if err != nil {
		panic(err) // the pin schema admits only sha256 digests
	}
	// One open file for the digest and the build metadata: both describe
	// the same bytes.
	in, err := a.inspect(path, alg)
	if err != nil {
		a.fail(r.unreadable, "%s binary: %v", r.name, err)
		return
	}
	a.v.Compared = append(a.v.Compared, schemas.DigestCheck{Subject: r.name, Expected: pin.Record.Digest, Actual: in.Digest})
	if in.Digest != pin.Record.Digest || in.Size < 0 || uint64(in.Size) != pin.Record.Size {
		a.fail(r.mismatch, "%s binary %s hashes to %s here; the pin at ledger index %d for %s %s says %s", r.name, path, in.Digest, pin.Index, pin.Record.Artifact, pin.Record.Version, pin.Record.Digest)
		return
	}
	a.pass(r.name + "-digest")
	if p := pin.Record.Provenance; p != nil {
		a.v.Provenance = append(a.v.Provenance, Relied{Subject: r.name, Builder: p.Builder, BuilderKey: pin.Record.Builder().Key, Repository: p.Repository, Commit: p.Commit})
	}
	a.checkBuild(r, in.Build, pin)
	a.admitted = append(a.admitted, artifactVersion{pin.Record.Artifact, version})
}

// checkUnpinned hashes a binary that no pin covers: it must be there, and
// match the digest the instruction names, if it names one. Nothing here
// admits it; the not-pinned finding stands.
func (a *admission) checkUnpinned(r role, ref schemas.ArtifactRef, path string) {
	if path == "" {
		a.fail(r.unreadable, "no %s binary path was given", r.name)
		return
	}
	in, err := a.inspect(path, "sha256")
	if err != nil {
		a.fail(r.unreadable, "%s binary: %v", r.name, err)
		return
	}
	if ref.Digest == "" {
		return
	}
	a.v.Compared = append(a.v.Compared, schemas.DigestCheck{Subject: r.name, Expected: ref.Digest, Actual: in.Digest})
	if in.Digest != ref.Digest {
		a.fail(r.mismatch, "%s binary %s hashes to %s here; instruction.%s.digest says %s (and no pin covers it)", r.name, path, in.Digest, r.name, ref.Digest)
	}
}

// artifactVersion is a version of an artifact an admission lets run.
type artifactVersion struct{ artifact, version string }

// checkBuild holds the build metadata read from the file on disk against
// the pin's, then flags dirty and unknown builds.
func (a *admission) checkBuild(r role, build *schemas.Build, pin *delegation.PinEntry) {
	if !sameBuild(build, pin.Record.Build) {
		a.fail(rules.BuildMismatch, "the %s binary's build metadata (%s) is not the pin's (%s)", r.name, describeBuild(build), describeBuild(pin.Record.Build))
		return
	}
	switch {
	case build == nil || build.Revision == "":
		a.fail(rules.UnknownBuild, "the %s binary %s records no source revision (%s)", r.name, pin.Record.Version, describeBuild(build))
	case build.Modified:
		a.fail(rules.DirtyBuild, "the %s binary %s was built from a modified tree (vcs.modified=true, revision %s)", r.name, pin.Record.Version, build.Revision)
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
// The version judged is the lowest under which these exact bytes were
// ever pinned in this ledger: an old binary pinned again under a higher
// version is still the old version. It returns that version.
func (a *admission) checkRollback(pin *delegation.PinEntry) string {
	version, relabel := pin.Record.Version, ""
	if low := a.st.LowestPinned(pin.Record.Artifact, pin.Record.Platform, pin.Record.Digest); low != nil && semver.Compare(low.Record.Version, version) < 0 {
		version = low.Record.Version
		relabel = fmt.Sprintf(" (the latest pin says %s, but the same bytes were pinned as %s at ledger index %d)", pin.Record.Version, version, low.Index)
	}
	high, err := a.mark(pin.Record.Artifact)
	if err != nil {
		a.fail(rules.Internal, "reading this runner's high-water mark for %s: %v", pin.Record.Artifact, err)
		return version
	}
	if high == "" || semver.Compare(version, high) >= 0 {
		a.pass("no-rollback")
		return version
	}
	if d := a.st.Downgrade(pin.Record.Artifact, version, a.now.Unix()); d != nil {
		a.pass("downgrade-allowed")
		return version
	}
	a.fail(rules.Rollback, "the %s binary pinned for %s is version %s%s, below %s, which this runner has admitted; no downgrade record allows it",
		pin.Record.Platform, pin.Record.Artifact, version, relabel, high)
	return version
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
		a.fail(rules.ProvisionMissing, "the instruction provisions %d files and no provision directory was given", len(instr.Provision))
		return
	}
	for _, p := range instr.Provision {
		path := filepath.Join(dir, strings.TrimPrefix(p.Dest, ".provision/"))
		var se *transfer.SizeError
		if err := transfer.CheckSize(path, p.Size); errors.As(err, &se) {
			a.fail(rules.ProvisionMismatch, "%s is %d bytes here; the instruction says %d bytes", p.Dest, se.Actual, se.Expected)
			continue
		}
		actual, err := a.compare(path, p.Digest)
		var mm *transfer.MismatchError
		switch {
		case errors.As(err, &mm):
			a.v.Compared = append(a.v.Compared, schemas.DigestCheck{Subject: p.Dest, Expected: mm.Expected, Actual: mm.Actual})
			a.fail(rules.ProvisionMismatch, "%s hashes to %s here; the instruction says %s", p.Dest, mm.Actual, mm.Expected)
		case err != nil:
			a.fail(rules.ProvisionMissing, "%s: %v", p.Dest, err)
		default:
			a.v.Compared = append(a.v.Compared, schemas.DigestCheck{Subject: p.Dest, Expected: p.Digest, Actual: actual})
		}
	}
	if !a.failedAny(rules.ProvisionMismatch, rules.ProvisionMissing) {
		a.pass("provision")
	}
}

// checkProvisionDir refuses a provision directory holding anything the
// instruction does not name: an unnamed file would reach the agent
// unchecked.
func (a *admission) checkProvisionDir(instr *schemas.Instruction, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		a.fail(rules.ProvisionMissing, "provision directory: %v", err)
		return
	}
	named := map[string]bool{}
	for _, p := range instr.Provision {
		named[strings.TrimPrefix(p.Dest, ".provision/")] = true
	}
	var extra []string
	for _, e := range entries {
		if !named[e.Name()] {
			extra = append(extra, fmt.Sprintf("%q", e.Name()))
		}
	}
	if n := len(extra); n > 0 {
		more := ""
		if n > 8 {
			more, extra = fmt.Sprintf(" and %d more", n-8), extra[:8]
		}
		a.fail(rules.ProvisionUnexpected, "the provision directory %s holds %d entries the instruction does not name: %s%s",
			dir, n, strings.Join(extra, ", "), more)
	}
}

// checkLedgerAge refuses a ledger whose newest checkpoint is older than
// the runner's configured maximum age.
func (a *admission) checkLedgerAge() {
	if a.cfg.MaxLedgerAge == 0 {
		return
	}
	signed := "signed"
	if a.cfg.LedgerTimeWitnessed {
		signed = "cosigned by the witness quorum"
	}
	switch {
	case a.cfg.LedgerTime.IsZero():
		a.fail(rules.StaleLedger, "the ledger's checkpoint carries no signed time, so its age cannot be judged (maximum %s)", a.cfg.MaxLedgerAge)
	case a.cfg.LedgerTime.After(a.now.Add(MaxClockSkew)):
		a.fail(rules.StaleLedger, "the ledger's newest checkpoint claims to be %s at %s, more than %s after this runner's clock (%s): its age cannot be judged",
			signed, a.cfg.LedgerTime.UTC().Format(time.RFC3339), MaxClockSkew, a.now.UTC().Format(time.RFC3339))
	case a.now.Sub(a.cfg.LedgerTime) > a.cfg.MaxLedgerAge:
		a.fail(rules.StaleLedger, "the ledger's newest checkpoint was %s at %s, %s ago; this runner accepts at most %s",
			signed, a.cfg.LedgerTime.UTC().Format(time.RFC3339), a.now.Sub(a.cfg.LedgerTime).Round(time.Second), a.cfg.MaxLedgerAge)
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

// inspect is transfer.Inspect, timed into the verdict's HashTime.
func (a *admission) inspect(path, alg string) (*transfer.Inspection, error) {
	defer a.timeHash(time.Now())
	return transfer.Inspect(path, alg)
}

// compare is transfer.Compare, timed into the verdict's HashTime.
func (a *admission) compare(path, digest string) (string, error) {
	defer a.timeHash(time.Now())
	return transfer.Compare(path, digest)
}

func (a *admission) timeHash(start time.Time) { a.v.HashTime += time.Since(start) }
