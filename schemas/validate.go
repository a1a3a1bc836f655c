package schemas

import (
	"bytes"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/writ-ledger/writ/internal/endpoint"
	"golang.org/x/mod/semver"
)

// Action is what a delegation grants (DESIGN.md, "Records"): one of
// Actions, stored as its name (a CBOR text string).
type Action string

// The actions a delegation may grant.
const (
	ActionDelegate   Action = "delegate"   // re-delegate, within the delegation's own scope and depth
	ActionInstruct   Action = "instruct"   // sign instructions for its streams and machines
	ActionIssuer     Action = "issuer"     // record a token issuer
	ActionPin        Action = "pin"        // pin releases of its artifacts
	ActionQuarantine Action = "quarantine" // quarantine and lift its machines
	ActionRevoke     Action = "revoke"     // revoke what its signer could have issued
)

// Actions lists every action, in the order a delegation stores them.
var Actions = []Action{ActionDelegate, ActionInstruct, ActionIssuer, ActionPin, ActionQuarantine, ActionRevoke}

// Verdict is an admission's outcome as a decision stores it: one of
// Verdicts (verify's package doc defines each).
type Verdict string

// The verdicts. All but VerdictRefused let the dispatch run.
const (
	VerdictAdmitted         Verdict = "admitted"          // run
	VerdictAdmittedUnsigned Verdict = "admitted-unsigned" // run, unsigned, under mode off
	VerdictWouldRefuse      Verdict = "would-refuse"      // run under mode warn; enforce would refuse it
	VerdictRefused          Verdict = "refused"           // not run
)

// Enforcement modes and verdicts, as stored in decisions.
var (
	Modes    = []string{"off", "warn", "enforce"}
	Verdicts = []Verdict{VerdictAdmitted, VerdictAdmittedUnsigned, VerdictWouldRefuse, VerdictRefused}
)

// Identifier and value syntax. Names start with a letter or digit so that
// they can never be read as a flag, a path or a pattern.
var (
	machineRe  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$`)
	streamRe   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$`)
	artifactRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$`)
	// A pattern is an identifier in which '*' may also appear; it matches
	// with path.Match, so '*' matches any run of characters except '/'.
	machinePatRe  = regexp.MustCompile(`^[A-Za-z0-9*][A-Za-z0-9.*_-]{0,252}$`)
	streamPatRe   = regexp.MustCompile(`^[A-Za-z0-9*][A-Za-z0-9.*_/-]{0,127}$`)
	artifactPatRe = regexp.MustCompile(`^[A-Za-z0-9*][A-Za-z0-9.*_+-]{0,127}$`)
	builderRe     = regexp.MustCompile(`^[!-~]{1,512}$`)
	commitRe      = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
	digestRe      = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	// contentRe: a digest of content computed elsewhere, in any algorithm
	// writ compares (FIPS 180-4 SHA-256, SHA-384, SHA-512).
	contentRe  = regexp.MustCompile(`^(sha256:[0-9a-f]{64}|sha384:[0-9a-f]{96}|sha512:[0-9a-f]{128})$`)
	provRe     = regexp.MustCompile(`^\.provision/[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)
	keyIDRe    = regexp.MustCompile(`^[0-9a-f]{64}$`)
	instrIDRe  = regexp.MustCompile(`^[0-9a-f]{32}$`)
	platformRe = regexp.MustCompile(`^[a-z0-9]{1,32}/[a-z0-9]{1,32}$`)
	ruleRe     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,63}$`)
	sessionRe  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
)

// ValidSession reports whether s is a work session name for a claim: 1 to
// 64 letters, digits, '.', '_' or '-'.
func ValidSession(s string) bool { return sessionRe.MatchString(s) }

// ValidMachine reports whether s is a machine name: 1 to 253 letters,
// digits, '.', '_' or '-', starting with a letter or digit.
func ValidMachine(s string) bool { return machineRe.MatchString(s) }

// ValidDigest reports whether s is "sha256:" followed by 64 lowercase hex
// digits.
func ValidDigest(s string) bool { return digestRe.MatchString(s) }

// ValidKeyID reports whether s is a key id: 64 lowercase hex digits.
func ValidKeyID(s string) bool { return keyIDRe.MatchString(s) }

// Match reports whether name matches pattern under writ's pattern syntax:
// '*' matches any run of characters except '/', every other character
// matches itself. Patterns are validated when a record is read, so a
// malformed pattern never reaches Match; if one does, it matches nothing.
func Match(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

func checkPatterns(k Kind, field string, pats []string, re *regexp.Regexp, required bool) error {
	if required && len(pats) == 0 {
		return fieldErr(k, field, "at least one pattern is required")
	}
	if len(pats) > MaxPatterns {
		return fieldErr(k, field, "%d patterns: at most %d", len(pats), MaxPatterns)
	}
	for i, p := range pats {
		if !re.MatchString(p) {
			return fieldErr(k, field, "pattern %d %q: only letters, digits, the name's punctuation and '*' are allowed", i, p)
		}
		if i > 0 && pats[i-1] >= p {
			return fieldErr(k, field, "patterns must be sorted and distinct")
		}
	}
	return nil
}

func checkCommon(k Kind, v uint64, issuedAt int64) error {
	return checkVersionTime(k, v, "issued_at", issuedAt)
}

// checkBuilders checks a delegation's builders: at most MaxPatterns,
// each an id of printable ASCII and a key digest, sorted and distinct.
func checkBuilders(k Kind, bs []Builder) error {
	if len(bs) > MaxPatterns {
		return fieldErr(k, "builders", "%d builders: at most %d", len(bs), MaxPatterns)
	}
	for i, b := range bs {
		switch {
		case !builderRe.MatchString(b.ID):
			return fieldErr(k, "builders", "builder %d id %q: 1 to 512 printable ASCII characters, no spaces", i, b.ID)
		case !digestRe.MatchString(b.Key):
			return fieldErr(k, "builders", "builder %d key %q: the key's or trusted root's digest, sha256: and 64 lowercase hex digits", i, b.Key)
		case (b.Issuer != "" || b.Identity != "") && !signerName(b.Issuer, b.Identity):
			return fieldErr(k, "builders", "builder %d: a certificate's issuer and identity come together, each 1 to %d bytes of UTF-8", i, MaxSignerName)
		case b.Source != "" && (len(b.Source) > MaxBuildPath || RepoPath("https://"+b.Source) != b.Source || strings.Count(b.Source, "/") < 2):
			return fieldErr(k, "builders", "builder %d source %q: a repository as HOST/OWNER/REPO, lower-case", i, b.Source)
		case b.Issuer != "" && b.Source == "":
			return fieldErr(k, "builders", "builder %d: a certificate-bound builder names its source repository (a certificate authority certifies every account alike)", i)
		case i > 0 && bs[i-1].Compare(b) >= 0:
			return fieldErr(k, "builders", "builders must be sorted by id, then key, and distinct")
		}
	}
	return nil
}

// signerName reports whether a certificate's issuer and identity are
// both present and within MaxSignerName bytes of UTF-8.
func signerName(issuer, identity string) bool {
	ok := func(s string) bool { return s != "" && len(s) <= MaxSignerName && utf8.ValidString(s) }
	return ok(issuer) && ok(identity)
}

func checkVersionTime(k Kind, v uint64, field string, t int64) error {
	if v != SchemaVersion {
		return fieldErr(k, "v", "must be %d", SchemaVersion)
	}
	if t <= 0 {
		return fieldErr(k, field, "must be a positive Unix time")
	}
	return nil
}

// Validate implements Record.
func (r *Root) Validate() error {
	k := KindRoot
	if err := checkCommon(k, r.V, r.IssuedAt); err != nil {
		return err
	}
	if r.Version < 1 {
		return fieldErr(k, "version", "must be at least 1")
	}
	if len(r.Keys) == 0 || len(r.Keys) > MaxRootKeys {
		return fieldErr(k, "keys", "must list 1 to %d keys, has %d", MaxRootKeys, len(r.Keys))
	}
	for i, key := range r.Keys {
		if len(key) != 32 {
			return fieldErr(k, "keys", "key %d is %d bytes, Ed25519 keys are 32", i, len(key))
		}
		if i > 0 && bytes.Compare(r.Keys[i-1], key) >= 0 {
			return fieldErr(k, "keys", "keys must be sorted bytewise and distinct (key %d)", i)
		}
	}
	if r.Threshold < 1 || r.Threshold > uint64(len(r.Keys)) {
		return fieldErr(k, "threshold", "must be between 1 and the number of keys (%d), is %d", len(r.Keys), r.Threshold)
	}
	if r.Expires <= r.IssuedAt {
		return fieldErr(k, "expires", "must be after issued_at")
	}
	return nil
}

// Validate implements Record.
func (r *Delegation) Validate() error {
	k := KindDelegation
	if err := checkCommon(k, r.V, r.IssuedAt); err != nil {
		return err
	}
	if len(r.Key) != 32 {
		return fieldErr(k, "key", "is %d bytes, Ed25519 keys are 32", len(r.Key))
	}
	if len(r.Actions) == 0 {
		return fieldErr(k, "actions", "at least one action is required")
	}
	for i, a := range r.Actions {
		if !slices.Contains(Actions, a) {
			return fieldErr(k, "actions", "unknown action %q (known: %v)", a, Actions)
		}
		if i > 0 && r.Actions[i-1] >= a {
			return fieldErr(k, "actions", "actions must be sorted and distinct")
		}
	}
	scoped := slices.Contains(r.Actions, ActionInstruct) || slices.Contains(r.Actions, ActionQuarantine)
	if err := checkPatterns(k, "streams", r.Streams, streamPatRe, slices.Contains(r.Actions, ActionInstruct)); err != nil {
		return err
	}
	if err := checkPatterns(k, "machines", r.Machines, machinePatRe, scoped); err != nil {
		return err
	}
	if err := checkPatterns(k, "artifacts", r.Artifacts, artifactPatRe, slices.Contains(r.Actions, ActionPin)); err != nil {
		return err
	}
	if len(r.Builders) > 0 && !slices.Contains(r.Actions, ActionPin) && !slices.Contains(r.Actions, ActionInstruct) {
		return fieldErr(k, "builders", "only with the pin or instruct action: builders are whom the provenance of a pin, or of the binaries an instruction runs, must come from")
	}
	if err := checkBuilders(k, r.Builders); err != nil {
		return err
	}
	if r.NotBefore <= 0 {
		return fieldErr(k, "not_before", "must be a positive Unix time")
	}
	if r.NotAfter <= r.NotBefore {
		return fieldErr(k, "not_after", "must be after not_before")
	}
	return nil
}

// Validate implements Record.
func (r *Pin) Validate() error {
	k := KindPin
	if err := checkCommon(k, r.V, r.IssuedAt); err != nil {
		return err
	}
	switch {
	case !artifactRe.MatchString(r.Artifact):
		return fieldErr(k, "artifact", "%q: letters, digits, '.', '_', '-', '+', starting with a letter or digit, at most 128", r.Artifact)
	case !platformRe.MatchString(r.Platform):
		return fieldErr(k, "platform", "%q: must be GOOS/GOARCH, e.g. linux/amd64", r.Platform)
	case !digestRe.MatchString(r.Digest):
		return fieldErr(k, "digest", "must be sha256: and 64 lowercase hex digits")
	case len(r.Version) > MaxVersion:
		return fieldErr(k, "version", "%d bytes: at most %d", len(r.Version), MaxVersion)
	case !fullVersion(r.Version):
		return fieldErr(k, "version", "%q is not a full semantic version with a leading v (e.g. v1.4.2)", r.Version)
	case r.Expires <= r.IssuedAt:
		return fieldErr(k, "expires", "must be after issued_at")
	}
	if err := r.Provenance.validate(k); err != nil {
		return err
	}
	return r.Build.validate(k)
}

// Bounds of a pin's provenance, in bytes.
const (
	MaxProvenanceEnvelope = 40 << 10
	MaxProvenanceKey      = 2048
	MaxTrustedRoot        = 64 << 10
	MaxSignerName         = 1024
)

// validate checks a pin's provenance, if there is any: every field
// present and within its bounds (the attestation itself is checked by
// package provenance).
func (p *Provenance) validate(k Kind) error {
	switch {
	case p == nil:
		return nil
	case len(p.Envelope) == 0 || len(p.Envelope) > MaxProvenanceEnvelope:
		return fieldErr(k, "provenance.envelope", "%d bytes: 1 to %d", len(p.Envelope), MaxProvenanceEnvelope)
	case (p.Key == nil) == (p.TrustedRoot == nil):
		return fieldErr(k, "provenance.key", "exactly one of key (a PKIX public key) and trusted_root (a Sigstore trusted root)")
	case p.Key != nil && (len(p.Key) == 0 || len(p.Key) > MaxProvenanceKey):
		return fieldErr(k, "provenance.key", "%d bytes: 1 to %d (a PKIX public key)", len(p.Key), MaxProvenanceKey)
	case p.TrustedRoot != nil && (len(p.TrustedRoot) == 0 || len(p.TrustedRoot) > MaxTrustedRoot):
		return fieldErr(k, "provenance.trusted_root", "%d bytes: 1 to %d (a Sigstore trusted root, JSON)", len(p.TrustedRoot), MaxTrustedRoot)
	case p.Key != nil && (p.Issuer != "" || p.Identity != ""):
		return fieldErr(k, "provenance.identity", "a certificate's issuer and identity come only with a trusted root")
	case p.TrustedRoot != nil && !signerName(p.Issuer, p.Identity):
		return fieldErr(k, "provenance.identity", "with a trusted root: the certificate's issuer and identity, each 1 to %d bytes of UTF-8", MaxSignerName)
	case !builderRe.MatchString(p.Builder):
		return fieldErr(k, "provenance.builder", "%q: 1 to 512 printable ASCII characters, no spaces (a builder id)", p.Builder)
	case len(p.Repository) > MaxBuildPath || !utf8.ValidString(p.Repository):
		return fieldErr(k, "provenance.repository", "at most %d bytes of UTF-8", MaxBuildPath)
	case !commitRe.MatchString(p.Commit):
		return fieldErr(k, "provenance.commit", "%q: 40 or 64 lowercase hex digits", p.Commit)
	}
	return nil
}

// fullVersion reports whether v is a semantic version with a leading "v"
// and all three numbers (golang.org/x/mod/semver), build suffix allowed.
func fullVersion(v string) bool {
	return semver.IsValid(v) && semver.Canonical(v)+semver.Build(v) == v
}

// validate checks a pin's build metadata, if there is any: a Go version,
// and every text within its limit.
func (b *Build) validate(k Kind) error {
	if b == nil {
		return nil
	}
	if b.GoVersion == "" {
		return fieldErr(k, "build.go_version", "is required when build is present")
	}
	for _, f := range []struct {
		field, value string
		max          int
	}{
		{"build.go_version", b.GoVersion, MaxBuildText}, {"build.path", b.Path, MaxBuildPath},
		{"build.module", b.Module, MaxBuildPath}, {"build.module_version", b.ModuleVersion, MaxBuildPath},
		{"build.vcs", b.VCS, MaxBuildText}, {"build.vcs_revision", b.Revision, MaxBuildText}, {"build.vcs_time", b.Time, MaxBuildText},
	} {
		if len(f.value) > f.max {
			return fieldErr(k, f.field, "%d bytes: at most %d", len(f.value), f.max)
		}
		if !utf8.ValidString(f.value) {
			return fieldErr(k, f.field, "must be valid UTF-8 (the binary's build information is not)")
		}
	}
	return nil
}

// Validate implements Record.
func (r *Instruction) Validate() error {
	k := KindInstruction
	if err := checkCommon(k, r.V, r.IssuedAt); err != nil {
		return err
	}
	if err := r.validateFields(k); err != nil {
		return err
	}
	if err := r.Claim.validate(k); err != nil {
		return err
	}
	if c := r.Claim; c != nil && (c.Until <= r.IssuedAt || c.Until-r.IssuedAt > MaxClaimSeconds) {
		return fieldErr(k, "claim.until", "must be after issued_at and at most %d seconds (30 days) after it", MaxClaimSeconds)
	}
	return r.validateProvision(k)
}

// validateFields checks an instruction's scalar fields: its names, digests,
// brief, transport and window.
func (r *Instruction) validateFields(k Kind) error {
	switch {
	case !instrIDRe.MatchString(r.ID):
		return fieldErr(k, "id", "must be 32 lowercase hex digits")
	case !streamRe.MatchString(r.Stream):
		return fieldErr(k, "stream", "%q is not a stream name", r.Stream)
	case !machineRe.MatchString(r.Machine):
		return fieldErr(k, "machine", "%q is not a machine name", r.Machine)
	case !artifactRe.MatchString(r.Agent.Name):
		return fieldErr(k, "agent.name", "%q is not an artifact name", r.Agent.Name)
	case r.Agent.Digest != "" && !digestRe.MatchString(r.Agent.Digest):
		return fieldErr(k, "agent.digest", "must be sha256: and 64 lowercase hex digits, as pins are")
	case r.Engine != nil && !artifactRe.MatchString(r.Engine.Name):
		return fieldErr(k, "engine.name", "%q is not an artifact name", r.Engine.Name)
	case r.Engine != nil && r.Engine.Digest != "" && !digestRe.MatchString(r.Engine.Digest):
		return fieldErr(k, "engine.digest", "must be sha256: and 64 lowercase hex digits, as pins are")
	case !utf8.ValidString(r.Brief):
		return fieldErr(k, "brief", "must be valid UTF-8")
	case len(r.Brief) > MaxBrief:
		return fieldErr(k, "brief", "%d bytes: at most %d; ship longer content as a provisioned file", len(r.Brief), MaxBrief)
	case r.Transport != "ssh" && r.Transport != "local":
		return fieldErr(k, "transport", "must be \"ssh\" or \"local\", is %q", r.Transport)
	case r.NotBefore <= 0:
		return fieldErr(k, "not_before", "must be a positive Unix time")
	case r.Expires <= r.NotBefore:
		return fieldErr(k, "expires", "must be after not_before")
	}
	return nil
}

// validateProvision checks an instruction's provision list: bounded,
// plain .provision/<name> destinations, content digests, sorted by dest.
func (r *Instruction) validateProvision(k Kind) error {
	if len(r.Provision) > MaxProvision {
		return fieldErr(k, "provision", "%d files: at most %d per instruction", len(r.Provision), MaxProvision)
	}
	for i, p := range r.Provision {
		switch {
		case !provRe.MatchString(p.Dest) || strings.Contains(p.Dest, ".."):
			return fieldErr(k, "provision", "dest %q: must be .provision/<name>, a plain file name", p.Dest)
		case !contentRe.MatchString(p.Digest):
			return fieldErr(k, "provision", "digest of %s: must be sha256:, sha384: or sha512: and lowercase hex", p.Dest)
		case i > 0 && r.Provision[i-1].Dest >= p.Dest:
			return fieldErr(k, "provision", "entries must be sorted by dest and distinct")
		}
	}
	return nil
}

// Validate implements Record.
func (r *Downgrade) Validate() error {
	k := KindDowngrade
	if err := checkCommon(k, r.V, r.IssuedAt); err != nil {
		return err
	}
	switch {
	case !artifactRe.MatchString(r.Artifact):
		return fieldErr(k, "artifact", "%q is not an artifact name", r.Artifact)
	case len(r.Version) > MaxVersion:
		return fieldErr(k, "version", "%d bytes: at most %d", len(r.Version), MaxVersion)
	case !fullVersion(r.Version):
		return fieldErr(k, "version", "%q is not a full semantic version with a leading v", r.Version)
	case len(r.Reason) == 0 || len(r.Reason) > MaxReason || !utf8.ValidString(r.Reason):
		return fieldErr(k, "reason", "must be 1 to %d bytes of UTF-8", MaxReason)
	case r.Expires <= r.IssuedAt:
		return fieldErr(k, "expires", "must be after issued_at")
	}
	return nil
}

// Validate implements Record.
func (r *Decision) Validate() error {
	k := KindDecision
	if err := checkVersionTime(k, r.V, "time", r.Time); err != nil {
		return err
	}
	switch {
	case !machineRe.MatchString(r.Machine):
		return fieldErr(k, "machine", "%q is not a machine name", r.Machine)
	case !slices.Contains(Modes, r.Mode):
		return fieldErr(k, "mode", "must be one of %v", Modes)
	case !slices.Contains(Verdicts, r.Verdict):
		return fieldErr(k, "verdict", "must be one of %v", Verdicts)
	case !ruleRe.MatchString(r.Rule):
		return fieldErr(k, "rule", "%q is not a rule id", r.Rule)
	case r.InstructionID != "" && !instrIDRe.MatchString(r.InstructionID):
		return fieldErr(k, "instruction_id", "must be 32 lowercase hex digits")
	case !digestRe.MatchString(r.InstructionDigest):
		return fieldErr(k, "instruction_digest", "must be sha256: and 64 lowercase hex digits")
	case r.Signer != "" && !keyIDRe.MatchString(r.Signer):
		return fieldErr(k, "signer", "must be a key id (64 lowercase hex digits)")
	case r.Stream != "" && !streamRe.MatchString(r.Stream):
		return fieldErr(k, "stream", "%q is not a stream name", r.Stream)
	case (r.AuthorityRoot == "") != (r.AuthoritySize == 0):
		return fieldErr(k, "authority_root", "authority_size and authority_root come together")
	case r.AuthorityRoot != "" && !keyIDRe.MatchString(r.AuthorityRoot):
		return fieldErr(k, "authority_root", "must be 64 lowercase hex digits")
	case r.AuthoritySize < 0:
		return fieldErr(k, "authority_size", "must not be negative")
	}
	return r.validateLists(k)
}

// validateLists checks a decision's compared digests, claim, high-water
// marks and passed and failed check ids.
func (r *Decision) validateLists(k Kind) error {
	if len(r.Compared) > MaxCompared {
		return fieldErr(k, "compared", "%d comparisons: at most %d", len(r.Compared), MaxCompared)
	}
	for _, c := range r.Compared {
		if c.Subject != "agent" && c.Subject != "engine" && !provRe.MatchString(c.Subject) {
			return fieldErr(k, "compared", "subject %q: agent, engine or a .provision/<name> destination", c.Subject)
		}
		if !contentRe.MatchString(c.Expected) || !contentRe.MatchString(c.Actual) {
			return fieldErr(k, "compared", "digests must be sha256:, sha384: or sha512: and lowercase hex")
		}
	}
	if err := r.Claim.validate(k); err != nil {
		return err
	}
	if r.Claim != nil && (r.Signer == "" || r.Verdict == "refused") {
		return fieldErr(k, "claim", "recorded only for an admitted instruction with a verified signer")
	}
	if len(r.HighWater) > MaxMarks {
		return fieldErr(k, "high_water", "%d marks: at most %d (the artifacts the dispatch named)", len(r.HighWater), MaxMarks)
	}
	for a, v := range r.HighWater {
		if !artifactRe.MatchString(a) || len(v) > MaxVersion || !fullVersion(v) {
			return fieldErr(k, "high_water", "%q: %q must map an artifact name to a full semantic version of at most %d bytes", a, v, MaxVersion)
		}
	}
	for _, list := range []struct {
		field string
		ids   []string
	}{{"passed", r.Passed}, {"failed", r.Failed}} {
		if len(list.ids) > MaxChecks {
			return fieldErr(k, list.field, "%d entries: at most %d", len(list.ids), MaxChecks)
		}
		for _, id := range list.ids {
			if !ruleRe.MatchString(id) {
				return fieldErr(k, list.field, "%q is not a check or rule id", id)
			}
		}
	}
	return nil
}

// Validate implements Record.
func (r *Revocation) Validate() error {
	k := KindRevocation
	if err := checkCommon(k, r.V, r.IssuedAt); err != nil {
		return err
	}
	if !keyIDRe.MatchString(r.Target) && !digestRe.MatchString(r.Target) {
		return fieldErr(k, "target", "must be a key id (64 lowercase hex) or a record digest (sha256: and 64 lowercase hex)")
	}
	if len(r.Reason) == 0 || len(r.Reason) > MaxReason || !utf8.ValidString(r.Reason) {
		return fieldErr(k, "reason", "must be 1 to %d bytes of UTF-8", MaxReason)
	}
	return nil
}

// Validate implements Record.
func (r *Issuer) Validate() error {
	k := KindIssuer
	if err := checkCommon(k, r.V, r.IssuedAt); err != nil {
		return err
	}
	if err := checkHTTPSURL(r.Issuer); err != nil {
		return fieldErr(k, "issuer", "%v", err)
	}
	if err := checkHTTPSURL(r.JWKSURI); err != nil {
		return fieldErr(k, "jwks_uri", "%v", err)
	}
	if len(r.Audiences) == 0 || len(r.Audiences) > MaxAudiences {
		return fieldErr(k, "audiences", "%d audiences: 1 to %d", len(r.Audiences), MaxAudiences)
	}
	for i, a := range r.Audiences {
		if a == "" || len(a) > MaxAudience || !utf8.ValidString(a) {
			return fieldErr(k, "audiences", "audience %d must be 1 to %d bytes of UTF-8", i, MaxAudience)
		}
		if i > 0 && r.Audiences[i-1] >= a {
			return fieldErr(k, "audiences", "audiences must be sorted and distinct")
		}
	}
	return nil
}

// checkHTTPSURL accepts an absolute https URL with a host, no user info
// and no fragment, written in the canonical form url.Parse gives back,
// whose authority passes the fetch guard's endpoint rule (package
// internal/endpoint): an explicit port is 1 to 65535, and a literal IP
// address is not one the guard never dials (link-local, multicast,
// unspecified, broadcast, or one of those carried in IPv6). A loopback or
// private literal passes: the record is what opens it to the guard. A
// host name passes: what it resolves to is judged when it is fetched.
func checkHTTPSURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL", s)
	case u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		return fmt.Errorf("%q must be an absolute https URL", s)
	case u.User != nil || u.Fragment != "" || u.RawFragment != "":
		return fmt.Errorf("%q must not carry user info or a fragment", s)
	case len(s) > MaxURL:
		return fmt.Errorf("%d bytes: at most %d", len(s), MaxURL)
	case u.String() != s:
		return fmt.Errorf("%q is not in canonical form", s)
	}
	if err := endpoint.Check(u); err != nil {
		return fmt.Errorf("%q: %w", s, err)
	}
	return nil
}

// Validate implements Record.
func (r *Quarantine) Validate() error {
	k := KindQuarantine
	if err := checkCommon(k, r.V, r.IssuedAt); err != nil {
		return err
	}
	switch {
	case !machineRe.MatchString(r.Machine):
		return fieldErr(k, "machine", "%q is not a machine name", r.Machine)
	case r.Lift && r.Until != 0:
		return fieldErr(k, "until", "a lift has no end time")
	case r.Until != 0 && r.Until <= r.IssuedAt:
		return fieldErr(k, "until", "must be after issued_at")
	}
	return nil
}

// validate checks a work claim, if there is one.
func (c *Claim) validate(k Kind) error {
	switch {
	case c == nil:
		return nil
	case !sessionRe.MatchString(c.Session):
		return fieldErr(k, "claim.session", "%q: 1 to 64 letters, digits, '.', '_' or '-'", c.Session)
	case c.Until <= 0:
		return fieldErr(k, "claim.until", "must be a positive Unix time")
	}
	return nil
}
