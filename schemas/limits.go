package schemas

// The limits table. Every string and list of every record kind has a
// maximum, enforced by the kind's Validate, which both Encode (before a
// record is written) and Decode (after it is read) call: so writ never
// writes a record it would refuse to read. The CBOR decoding limits
// (MaxArrayElements, MaxMapPairs, MaxNestingDepth) and the record and
// entry size (MaxRecordSize) sit above every field limit, and a record
// with every field at its limit, in an envelope with the most signatures
// its kind may carry, stays within MaxRecordSize (TestLimitsRoundTrip).
// Lengths are in bytes of UTF-8; counts in items.
const (
	// MaxRootKeys is the most keys a root lists: 32, so that a rotation
	// signed by every key of the old root and of the new one (at most 64
	// distinct keys) fits the 64 signatures of one envelope.
	MaxRootKeys = 32

	// MaxPatterns is the most patterns in each of a delegation's streams,
	// machines and artifacts lists.
	MaxPatterns = 64

	// MaxVersion is the longest semantic version (a pin's, a downgrade's,
	// a high-water mark's), in bytes: semver allows any length of
	// pre-release and build text, a record does not.
	MaxVersion = 128

	// MaxBrief is the longest instruction brief, in bytes (32 KiB);
	// longer content travels as a provisioned file, checked by digest.
	MaxBrief = 32 << 10

	// MaxReason is the longest reason of a revocation or a downgrade, in
	// bytes.
	MaxReason = 256

	// MaxAudiences is the most audiences an issuer record lists;
	// MaxAudience the longest one, in bytes.
	MaxAudiences = 16
	MaxAudience  = 512

	// MaxURL is the longest issuer or jwks_uri URL, in bytes.
	MaxURL = 2048

	// MaxBuildText is the longest Go version, vcs or vcs.time string of a
	// pin's build metadata, and MaxBuildPath the longest main package path,
	// module path or module version, in bytes.
	MaxBuildText = 256
	MaxBuildPath = 1024

	// MaxChecks is the most entries in a decision's passed and failed
	// lists: a verdict runs far fewer checks, and each rule fails once.
	MaxChecks = 64

	// MaxCompared is the most digest comparisons a decision records: the
	// agent, the engine and every provisioned file.
	MaxCompared = MaxProvision + 2

	// MaxMarks is the most high-water marks a decision records: those of
	// the artifacts its dispatch named (the agent and the engine). A
	// runner's memory of every other artifact is in the decisions that
	// judged it, so a decision's size does not grow with the runner's
	// history.
	MaxMarks = 2
)

// Limit is one row of the limits table: a field of a record kind (a
// dotted path for nested fields, as a *FieldError names it), its maximum
// and unit, and the CDDL rule and member that state it in writ.cddl.
type Limit struct {
	Kind  Kind
	Field string
	Max   int
	Unit  string // "bytes" or "items"
	Rule  string // the writ.cddl rule holding the member
}

// Limits is the limits table, for documentation and tests; Validate
// enforces each row. Identifiers with a fixed syntax (key ids, digests,
// instruction ids, rule ids) have a fixed length and are not listed.
var Limits = []Limit{
	{KindRoot, "keys", MaxRootKeys, "items", "root"},
	{KindDelegation, "streams", MaxPatterns, "items", "delegation"},
	{KindDelegation, "machines", MaxPatterns, "items", "delegation"},
	{KindDelegation, "artifacts", MaxPatterns, "items", "delegation"},
	{KindDelegation, "streams[i]", 128, "bytes", "stream-pattern"},
	{KindDelegation, "machines[i]", 253, "bytes", "machine-pattern"},
	{KindDelegation, "artifacts[i]", 128, "bytes", "artifact-pattern"},
	{KindPin, "artifact", 128, "bytes", "artifact"},
	{KindPin, "platform", 65, "bytes", "pin"},
	{KindPin, "version", MaxVersion, "bytes", "version"},
	{KindPin, "build.go_version", MaxBuildText, "bytes", "build"},
	{KindPin, "build.path", MaxBuildPath, "bytes", "build"},
	{KindPin, "build.module", MaxBuildPath, "bytes", "build"},
	{KindPin, "build.module_version", MaxBuildPath, "bytes", "build"},
	{KindPin, "build.vcs", MaxBuildText, "bytes", "build"},
	{KindPin, "build.vcs_revision", MaxBuildText, "bytes", "build"},
	{KindPin, "build.vcs_time", MaxBuildText, "bytes", "build"},
	{KindInstruction, "stream", 128, "bytes", "stream"},
	{KindInstruction, "machine", 253, "bytes", "machine"},
	{KindInstruction, "provision", MaxProvision, "items", "instruction"},
	{KindInstruction, "provision[i].dest", 139, "bytes", "provision"},
	{KindInstruction, "brief", MaxBrief, "bytes", "instruction"},
	{KindInstruction, "claim.session", 64, "bytes", "claim"},
	{KindDecision, "rule", 64, "bytes", "rule-id"},
	{KindDecision, "compared", MaxCompared, "items", "decision"},
	{KindDecision, "compared[i].subject", 139, "bytes", "digest-check"},
	{KindDecision, "passed", MaxChecks, "items", "decision"},
	{KindDecision, "failed", MaxChecks, "items", "decision"},
	{KindDecision, "high_water", MaxMarks, "items", "decision"},
	{KindDecision, "high_water version", MaxVersion, "bytes", "version"},
	{KindRevocation, "reason", MaxReason, "bytes", "revocation"},
	{KindIssuer, "issuer", MaxURL, "bytes", "https-url"},
	{KindIssuer, "jwks_uri", MaxURL, "bytes", "https-url"},
	{KindIssuer, "audiences", MaxAudiences, "items", "issuer"},
	{KindIssuer, "audiences[i]", MaxAudience, "bytes", "issuer"},
	{KindDowngrade, "version", MaxVersion, "bytes", "version"},
	{KindDowngrade, "reason", MaxReason, "bytes", "downgrade"},
}
