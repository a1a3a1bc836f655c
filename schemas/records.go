package schemas

import (
	"fmt"
	"strings"
)

// Field names are the CBOR map keys and match writ.cddl exactly; a test
// checks that the two agree. Times are Unix seconds (UTC). Public keys are
// raw 32-byte Ed25519 keys (RFC 8032 §5.1.5). Digests are "sha256:" and 64
// lowercase hex digits.

// Root is the trust anchor: the keys whose threshold signs every other
// authority act, and how long that trust lasts. The first entry of every
// ledger is a root, signed by at least Threshold of its own Keys.
type Root struct {
	V         uint64   `cbor:"v" json:"v"`
	Version   uint64   `cbor:"version" json:"version"`     // 1 for the first root
	Keys      [][]byte `cbor:"keys" json:"keys"`           // raw Ed25519 keys, 32 bytes each, sorted bytewise, distinct
	Threshold uint64   `cbor:"threshold" json:"threshold"` // 1 ≤ threshold ≤ len(keys)
	IssuedAt  int64    `cbor:"issued_at" json:"issued_at"`
	Expires   int64    `cbor:"expires" json:"expires"` // trust ends at this instant: expired when now >= expires
}

// Delegation grants Key the Actions on the matching streams, machines and
// artifacts during [NotBefore, NotAfter). Its issuer is whoever signed it:
// the root threshold in this version.
type Delegation struct {
	V         uint64   `cbor:"v" json:"v"`
	Key       []byte   `cbor:"key" json:"key"`                                 // delegate's raw Ed25519 key, 32 bytes
	Actions   []Action `cbor:"actions" json:"actions"`                         // sorted, distinct, from Actions
	Streams   []string `cbor:"streams,omitempty" json:"streams,omitempty"`     // patterns; required with "instruct"
	Machines  []string `cbor:"machines,omitempty" json:"machines,omitempty"`   // patterns; required with "instruct"
	Artifacts []string `cbor:"artifacts,omitempty" json:"artifacts,omitempty"` // patterns; required with "pin"
	// Builders, with "pin": the builders the delegate's pins must carry
	// provenance from (Pin.Provenance); with "instruct": the builders the
	// pins of the binaries its instructions run must carry provenance
	// from (checked at admission). Each is a builder id bound to what
	// vouches for it (Builder); none: provenance is not demanded. Sorted
	// (Builder.Compare), distinct.
	Builders  []Builder `cbor:"builders,omitempty" json:"builders,omitempty"`
	NotBefore int64     `cbor:"not_before" json:"not_before"`
	NotAfter  int64     `cbor:"not_after" json:"not_after"` // exclusive
	Depth     uint64    `cbor:"depth" json:"depth"`         // remaining re-delegation depth
	IssuedAt  int64     `cbor:"issued_at" json:"issued_at"`
}

// Pin fixes the exact agent (or engine) binary a runner may execute for an
// artifact on a platform: its digest and size, the version the release
// engineer assigned, and the Go build metadata read from the file.
type Pin struct {
	V        uint64 `cbor:"v" json:"v"`
	Artifact string `cbor:"artifact" json:"artifact"` // letters, digits, '.', '_', '-', '+'
	Platform string `cbor:"platform" json:"platform"` // GOOS/GOARCH, e.g. "linux/amd64"
	Digest   string `cbor:"digest" json:"digest"`
	Size     uint64 `cbor:"size" json:"size"`       // bytes
	Version  string `cbor:"version" json:"version"` // semantic version with a leading "v"
	Build    *Build `cbor:"build,omitempty" json:"build,omitempty"`
	IssuedAt int64  `cbor:"issued_at" json:"issued_at"`
	Expires  int64  `cbor:"expires" json:"expires"`
	// Provenance, when present, is the build provenance that vouched for
	// the binary when it was pinned, checked again by every reader of
	// the log (package provenance).
	Provenance *Provenance `cbor:"provenance,omitempty" json:"provenance,omitempty"`
}

// Provenance is a pin's build provenance: the attestation as the builder
// wrote it (a DSSE envelope, or a Sigstore bundle holding one, of an
// in-toto statement with an SLSA provenance v1 predicate, at most
// MaxProvenanceEnvelope bytes); what its signature is checked under,
// exactly one of the builder's public key (Key, PKIX DER, at most
// MaxProvenanceKey bytes) or a Sigstore trusted root (TrustedRoot, its
// JSON, at most MaxTrustedRoot bytes); and what it attests: the builder
// id, the source repository (a git URI, "" when it names none) and
// commit (40 or 64 lowercase hex digits) the pinned binary was built
// from, and, under a trusted root, the signing certificate's OIDC issuer
// and subject (Issuer, Identity).
type Provenance struct {
	Envelope    []byte `cbor:"envelope" json:"envelope"`
	Key         []byte `cbor:"key,omitempty" json:"key,omitempty"`
	TrustedRoot []byte `cbor:"trusted_root,omitempty" json:"trusted_root,omitempty"`
	Builder     string `cbor:"builder" json:"builder"`
	Repository  string `cbor:"repository,omitempty" json:"repository,omitempty"`
	Commit      string `cbor:"commit" json:"commit"`
	Issuer      string `cbor:"issuer,omitempty" json:"issuer,omitempty"`
	Identity    string `cbor:"identity,omitempty" json:"identity,omitempty"`
}

// Builder is a builder a pin delegation trusts: the builder id its
// provenance names (SLSA runDetails.builder.id) and what vouches for
// it: the key that signs that provenance, as "sha256:" and the 64 hex
// digits of the SHA-256 of its PKIX DER encoding (SHA256Digest),
// or a Sigstore trusted root (the SHA-256 of its JSON as recorded) with
// the OIDC issuer and subject (SAN) its signing certificate must name.
// Binding the id to a signer is what makes the demand mean anything: a
// builder id alone is a claim anyone with a key can write, and a
// trusted root alone certifies anyone with an account.
//
// Source, when set, is the repository (RepoPath: HOST/OWNER/REPO) the
// provenance must name as its source: required with a certificate, whose
// authority certifies every account alike (every repository that calls
// GitHub's SLSA generator gets the same certificate subject), optional
// with a key.
type Builder struct {
	ID       string `cbor:"id" json:"id"`
	Key      string `cbor:"key" json:"key"`
	Issuer   string `cbor:"issuer,omitempty" json:"issuer,omitempty"`
	Identity string `cbor:"identity,omitempty" json:"identity,omitempty"`
	Source   string `cbor:"source,omitempty" json:"source,omitempty"`
}

// Admits reports whether a delegation's builder b admits p, the builder
// a pin's provenance vouches as (Pin.Builder), or a re-delegation's
// builder: the same id, key, issuer and identity, and, when b names a
// source, the same source.
func (b Builder) Admits(p Builder) bool {
	return b.ID == p.ID && b.Key == p.Key && b.Issuer == p.Issuer && b.Identity == p.Identity && (b.Source == "" || b.Source == p.Source)
}

// String names b in a message: its id, what vouches for it, its source.
func (b Builder) String() string {
	if b.ID == "" {
		return "no provenance"
	}
	s := fmt.Sprintf("builder %q signed by key %s", b.ID, b.Key)
	if b.Identity != "" {
		s = fmt.Sprintf("builder %q certified (trusted root %s) as %q by %q", b.ID, b.Key, b.Identity, b.Issuer)
	}
	if b.Source != "" {
		s += fmt.Sprintf(" from %s", b.Source)
	}
	return s
}

// Compare orders builders by id, key, issuer, identity, then source (the order of
// Delegation.Builders).
func (b Builder) Compare(o Builder) int {
	for _, c := range []int{strings.Compare(b.ID, o.ID), strings.Compare(b.Key, o.Key), strings.Compare(b.Issuer, o.Issuer), strings.Compare(b.Identity, o.Identity)} {
		if c != 0 {
			return c
		}
	}
	return strings.Compare(b.Source, o.Source)
}

// Builder returns the builder a pin's provenance vouches as: its
// builder id and the digest of the key that signed it, or of the
// trusted root it was checked under with the certificate's issuer and
// identity, and the repository it names (RepoPath, "" when none reads);
// the zero Builder when the pin has no provenance.
func (p *Pin) Builder() Builder {
	r := p.Provenance
	if r == nil {
		return Builder{}
	}
	if r.Key != nil {
		return Builder{ID: r.Builder, Key: SHA256Digest(r.Key), Source: RepoPath(r.Repository)}
	}
	return Builder{ID: r.Builder, Key: SHA256Digest(r.TrustedRoot), Issuer: r.Issuer, Identity: r.Identity, Source: RepoPath(r.Repository)}
}

// Build is the Go build metadata of a pinned binary (runtime/debug.BuildInfo
// as read by debug/buildinfo). It is absent from a pin when the file
// carries none (not a Go binary). Empty strings mean "not recorded".
type Build struct {
	GoVersion     string `cbor:"go_version" json:"go_version"`
	Path          string `cbor:"path" json:"path"` // main package import path
	Module        string `cbor:"module,omitempty" json:"module,omitempty"`
	ModuleVersion string `cbor:"module_version,omitempty" json:"module_version,omitempty"`
	VCS           string `cbor:"vcs,omitempty" json:"vcs,omitempty"`
	Revision      string `cbor:"vcs_revision,omitempty" json:"vcs_revision,omitempty"`
	Time          string `cbor:"vcs_time,omitempty" json:"vcs_time,omitempty"` // RFC 3339, as Go records it
	Modified      bool   `cbor:"vcs_modified,omitempty" json:"vcs_modified,omitempty"`
}

// Instruction is one dispatch to one runner machine.
type Instruction struct {
	V       uint64      `cbor:"v" json:"v"`
	ID      string      `cbor:"id" json:"id"` // 32 lowercase hex digits (128 random bits)
	Stream  string      `cbor:"stream" json:"stream"`
	Machine string      `cbor:"machine" json:"machine"`
	Agent   ArtifactRef `cbor:"agent" json:"agent"`
	// Engine is the binary that applies the boundary on the runner, when
	// the dispatch names one; it is checked against its pin like the agent.
	Engine *ArtifactRef `cbor:"engine,omitempty" json:"engine,omitempty"`
	// Provision lists the files shipped with the dispatch, sorted by
	// destination; each is hashed on the runner and compared.
	Provision []Provision `cbor:"provision,omitempty" json:"provision,omitempty"`
	Brief     string      `cbor:"brief,omitempty" json:"brief,omitempty"` // UTF-8 text for the agent
	// Claim, when present, claims the instruction's stream for a work
	// session: while it is live, instructions for the stream from other
	// sessions are refused on this runner.
	Claim     *Claim `cbor:"claim,omitempty" json:"claim,omitempty"`
	Transport string `cbor:"transport" json:"transport"` // "ssh" or "local"
	IssuedAt  int64  `cbor:"issued_at" json:"issued_at"`
	NotBefore int64  `cbor:"not_before" json:"not_before"`
	Expires   int64  `cbor:"expires" json:"expires"` // exclusive
}

// Claim is a work claim on an instruction's stream: Session holds the
// stream until Until (Unix seconds, exclusive), or until an instruction
// from the same session with Release set is admitted.
type Claim struct {
	Session string `cbor:"session" json:"session"` // 1 to 64 of letters, digits, '.', '_', '-'
	Until   int64  `cbor:"until" json:"until"`
	Release bool   `cbor:"release,omitempty" json:"release,omitempty"`
}

// ArtifactRef names a pinned artifact. Digest, when present, is the digest
// the dispatcher expects; admission still hashes the file itself and
// compares with the pin, never trusting this value alone.
type ArtifactRef struct {
	Name   string `cbor:"name" json:"name"`
	Digest string `cbor:"digest,omitempty" json:"digest,omitempty"`
}

// Provision is one provisioned file: where it lands on the runner
// (".provision/<name>"), its digest and its size in bytes.
type Provision struct {
	Dest   string `cbor:"dest" json:"dest"`
	Digest string `cbor:"digest" json:"digest"` // sha256, sha384 or sha512
	Size   uint64 `cbor:"size" json:"size"`
}

// Downgrade lets runners admit an artifact at Version although they have
// admitted a higher one (rollback protection's one exception). Only the
// root threshold signs it; it lapses at Expires.
type Downgrade struct {
	V        uint64 `cbor:"v" json:"v"`
	Artifact string `cbor:"artifact" json:"artifact"`
	Version  string `cbor:"version" json:"version"` // the lower version allowed
	Reason   string `cbor:"reason" json:"reason"`
	IssuedAt int64  `cbor:"issued_at" json:"issued_at"`
	Expires  int64  `cbor:"expires" json:"expires"`
}

// Kind implements Record.
func (*Downgrade) Kind() Kind { return KindDowngrade }

// Decision is a runner's admission verdict for one dispatch, appended to
// its decision log. It never holds the brief, a secret, or a URL path or
// query.
type Decision struct {
	V                 uint64        `cbor:"v" json:"v"`
	Time              int64         `cbor:"time" json:"time"`
	Machine           string        `cbor:"machine" json:"machine"`
	Mode              string        `cbor:"mode" json:"mode"`       // off, warn or enforce
	Verdict           Verdict       `cbor:"verdict" json:"verdict"` // one of Verdicts
	Rule              string        `cbor:"rule" json:"rule"`       // rule id; "ok" when nothing failed
	InstructionID     string        `cbor:"instruction_id,omitempty" json:"instruction_id,omitempty"`
	InstructionDigest string        `cbor:"instruction_digest" json:"instruction_digest"` // digest of the dispatch bytes received
	Signer            string        `cbor:"signer,omitempty" json:"signer,omitempty"`     // key id (64 hex) of a verified signer
	Stream            string        `cbor:"stream,omitempty" json:"stream,omitempty"`
	Compared          []DigestCheck `cbor:"compared,omitempty" json:"compared,omitempty"`
	Passed            []string      `cbor:"passed,omitempty" json:"passed,omitempty"` // checks that ran and passed
	Failed            []string      `cbor:"failed,omitempty" json:"failed,omitempty"` // rule ids that failed, in check order
	// AuthoritySize and AuthorityRoot (lowercase hex) are the verified
	// authority checkpoint the decision was judged against, or the one
	// trusted before when the ledger failed verification: the runner's
	// memory of the ledger, signed with its decision log.
	AuthoritySize int64  `cbor:"authority_size,omitempty" json:"authority_size,omitempty"`
	AuthorityRoot string `cbor:"authority_root,omitempty" json:"authority_root,omitempty"`
	// HighWater is the highest version of each artifact this runner has
	// admitted, carried forward from decision to decision: it only rises.
	HighWater map[string]string `cbor:"high_water,omitempty" json:"high_water,omitempty"`
	// Claim is the instruction's work claim, recorded when the decision
	// admitted it: the runner's durable memory of who holds the stream.
	Claim *Claim `cbor:"claim,omitempty" json:"claim,omitempty"`
}

// DigestCheck records one comparison of a locally computed digest with the
// expected one.
type DigestCheck struct {
	Subject  string `cbor:"subject" json:"subject"`   // what was hashed, e.g. "agent"
	Expected string `cbor:"expected" json:"expected"` // from the pin
	Actual   string `cbor:"actual" json:"actual"`     // computed by the runner
}

// Revocation voids a key (by key id) or a record (by record digest) from
// its ledger position on. It is permanent.
type Revocation struct {
	V        uint64 `cbor:"v" json:"v"`
	Target   string `cbor:"target" json:"target"` // key id (64 hex) or record digest ("sha256:" + 64 hex)
	Reason   string `cbor:"reason" json:"reason"` // why, for people: 1 to 256 bytes of UTF-8
	IssuedAt int64  `cbor:"issued_at" json:"issued_at"`
}

// Issuer names an external token issuer, the exact URI of its key set and
// the audiences its tokens may carry. Only the root threshold may sign it.
type Issuer struct {
	V         uint64   `cbor:"v" json:"v"`
	Issuer    string   `cbor:"issuer" json:"issuer"`       // the tokens' "iss", an https URL (endpoint rule applies)
	JWKSURI   string   `cbor:"jwks_uri" json:"jwks_uri"`   // the exact https URL fetched for keys (endpoint rule applies)
	Audiences []string `cbor:"audiences" json:"audiences"` // sorted, distinct
	IssuedAt  int64    `cbor:"issued_at" json:"issued_at"`
}

// Quarantine drains a machine (no work is admitted) until Until, or lifts
// an earlier quarantine when Lift is set.
type Quarantine struct {
	V        uint64 `cbor:"v" json:"v"`
	Machine  string `cbor:"machine" json:"machine"`
	Until    int64  `cbor:"until,omitempty" json:"until,omitempty"` // Unix seconds; absent: until lifted
	Lift     bool   `cbor:"lift,omitempty" json:"lift,omitempty"`
	IssuedAt int64  `cbor:"issued_at" json:"issued_at"`
}

// Kind implements Record.
func (*Revocation) Kind() Kind { return KindRevocation }

// Kind implements Record.
func (*Issuer) Kind() Kind { return KindIssuer }

// Kind implements Record.
func (*Quarantine) Kind() Kind { return KindQuarantine }

// Kind implements Record.
func (*Root) Kind() Kind { return KindRoot }

// Kind implements Record.
func (*Delegation) Kind() Kind { return KindDelegation }

// Kind implements Record.
func (*Pin) Kind() Kind { return KindPin }

// Kind implements Record.
func (*Instruction) Kind() Kind { return KindInstruction }

// Kind implements Record.
func (*Decision) Kind() Kind { return KindDecision }
