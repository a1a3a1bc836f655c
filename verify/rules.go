package verify

import "github.com/writ-ledger/writ/delegation"

// Class groups rules by what they protect; the class decides whether the
// enforcement mode governs the rule.
type Class string

// Rule classes (see the package doc).
const (
	ClassPass         Class = "pass"
	ClassIntegrity    Class = "integrity"
	ClassAuthenticity Class = "authenticity"
	ClassAuthority    Class = "authority"
	ClassFreshness    Class = "freshness"
	ClassProvenance   Class = "provenance"
	ClassContent      Class = "content"
	ClassInternal     Class = "internal"
)

// Governed reports whether the enforcement mode governs rules of class c.
// Integrity and internal rules refuse in every mode.
func (c Class) Governed() bool {
	switch c {
	case ClassAuthenticity, ClassAuthority, ClassFreshness, ClassProvenance:
		return true
	}
	return false
}

// Rule is one entry of the closed rule vocabulary.
type Rule struct {
	ID      string
	Class   Class
	Summary string // what the rule checks, one sentence
	NextAct string // what the operator should do when it fails
	// Always marks a rule of a governed class that nevertheless refuses in
	// every mode, because its failure is evidence of tampering rather than
	// of missing authority (a signature by a trusted key that does not
	// verify over the bytes received).
	Always bool
}

// Governed reports whether the enforcement mode governs this rule: its
// class is governed and the rule is not marked Always.
func (r Rule) Governed() bool { return r.Class.Governed() && !r.Always }

// Rule ids. The vocabulary is closed: every verdict names one of these.
const (
	RuleOK                   = "ok"
	RuleLedgerUnverified     = "ledger-unverified"
	RuleLedgerInconsistent   = "ledger-inconsistent"
	RuleMalformedDispatch    = "malformed-dispatch"
	RuleWrongMachine         = "wrong-machine"
	RuleAgentBinaryMissing   = "agent-binary-unreadable"
	RuleAgentPinMismatch     = "agent-pin-mismatch"
	RuleAgentDigestMismatch  = "agent-digest-mismatch"
	RuleUnsigned             = "unsigned"
	RuleBadSignature         = "bad-signature"
	RuleUnknownKey           = "unknown-key"
	RuleWrongKind            = "wrong-record-kind"
	RuleNoDelegation         = delegation.RuleNoDelegation
	RuleOutOfScope           = delegation.RuleOutOfScope
	RuleOutsideWindow        = delegation.RuleOutsideWindow
	RuleRootExpired          = delegation.RuleRootExpired
	RuleRevoked              = delegation.RuleRevoked
	RuleQuarantined          = "quarantined"
	RuleRootUntrusted        = "root-untrusted"
	RuleLedgerUnwitnessed    = "ledger-unwitnessed"
	RuleNotYetValid          = "instruction-not-yet-valid"
	RuleExpired              = "instruction-expired"
	RulePinExpired           = "pin-expired"
	RuleAgentNotPinned       = "agent-not-pinned"
	RuleInternal             = "internal-error"
	RuleReplay               = "replay"
	RuleWorkClaimed          = "work-claimed"
	RuleReceiptMissing       = "receipt-missing"
	RuleReceiptInvalid       = "receipt-invalid"
	RuleEngineNotNamed       = "engine-not-named"
	RuleEngineNotPinned      = "engine-not-pinned"
	RuleEnginePinMismatch    = "engine-pin-mismatch"
	RuleEngineBinaryMissing  = "engine-binary-unreadable"
	RuleEngineDigestMismatch = "engine-digest-mismatch"
	RuleBuildMismatch        = "build-mismatch"
	RuleDirtyBuild           = "dirty-build"
	RuleUnknownBuild         = "unknown-build"
	RuleRollback             = "rollback"
	RuleStaleLedger          = "stale-ledger"
	RuleProvisionMissing     = "provision-unreadable"
	RuleProvisionMismatch    = "provision-digest-mismatch"
	RuleProvisionUnexpected  = "provision-unexpected"
	RuleWorkspacePath        = "r30-workspace-path"
	RuleProvisionCitation    = "r37-provision-citation"
)

// Rules is the rule vocabulary, in the order checks run. `writ admit
// --rules` prints it; the package doc's table is the same list.
var Rules = []Rule{
	{RuleOK, ClassPass, "every check that ran passed", "none", false},
	{RuleLedgerUnverified, ClassIntegrity, "the runner's copy of the ledger verifies against its signed checkpoint, entry by entry",
		"do not trust this ledger copy: run `writ ledger verify` for the evidence and restore it from a verified export", false},
	{RuleLedgerInconsistent, ClassIntegrity, "the authority log extends the one this runner last trusted (same origin, no smaller, consistency proof to the trusted root)",
		"treat the ledger as rolled back or forked: compare both checkpoints in the reason with the auditors' and restore a consistent copy", false},
	{RuleRootUntrusted, ClassIntegrity, "the ledger's first root is the one given with --trust-root (by digest)",
		"do not use this ledger: its root of trust is not the one this runner was set up with", false},
	{RuleLedgerUnwitnessed, ClassIntegrity, "the authority log's checkpoint is cosigned by the quorum of this runner's witness policy (--policy, c2sp.org/tlog-policy)",
		"sync again once the writer has collected its witnesses' cosignatures (`writ ledger checkpoint --refresh --policy`); if a witness refused it, treat the log as split: compare the writer's checkpoint with the witnesses'", false},
	{RuleMalformedDispatch, ClassIntegrity, "the dispatch is a canonical tagged COSE envelope of an instruction, or a canonical bare instruction record",
		"regenerate the instruction with `writ instruct`; never edit one by hand", false},
	{RuleUnsigned, ClassAuthenticity, "the instruction is signed",
		"have the control plane sign instructions (`writ instruct --key`); before tightening to enforce, run warn and audit what it would refuse", false},
	{RuleWrongKind, ClassAuthenticity, "the envelope was signed as an instruction, not as another record kind",
		"dispatch an instruction record; a pin or delegation is never an order", false},
	{RuleBadSignature, ClassAuthenticity, "every signature by a key the ledger trusts verifies over the bytes received",
		"treat the dispatch as forged or corrupted: do not run it, and find out where it was altered", true},
	{RuleUnknownKey, ClassAuthenticity, "the signer's key is trusted by this runner's ledger",
		"delegate to the signer's key and sync the ledger, or sign with a key that holds a delegation", false},
	{RuleWrongMachine, ClassIntegrity, "the instruction names this machine",
		"dispatch the instruction to the machine it names, or issue one for this machine", false},
	{RuleReplay, ClassIntegrity, "the instruction id was never admitted on this runner before (in any mode, across restarts)",
		"do not re-send an instruction: issue a new one (`writ instruct` gives every instruction a new id)", false},
	{RuleWorkClaimed, ClassIntegrity, "no other session holds a live work claim on the instruction's stream",
		"wait until the claim named in the reason expires or its session releases it (an instruction with --release-claim), then dispatch again", false},
	{RuleReceiptMissing, ClassIntegrity, "a receipt accompanies the dispatch (only with --require-receipt)",
		"append the instruction to the authority log, fetch its receipt (`writ ledger receipt`), sync this runner's ledger, and send both", false},
	{RuleReceiptInvalid, ClassIntegrity, "the receipt proves, under the authority log's key, that these exact dispatch bytes are in the authority log at or below a checkpoint this runner verified",
		"sync this runner's ledger to a checkpoint that covers the receipt, or fetch a receipt for these exact bytes", false},
	{RuleRootExpired, ClassAuthority, "the ledger's root has not expired",
		"an expired root trusts nothing and cannot be rotated (rotate it before it expires: `writ root sign --previous`); make a new ledger with a new root and append its records again", false},
	{RuleQuarantined, ClassAuthority, "no signed quarantine drains this machine now",
		"wait for the quarantine to end, or have it lifted (`writ quarantine --lift`): by the root threshold when the root quarantined the machine, else by a key holding quarantine for it", true},
	{RuleRevoked, ClassAuthority, "neither the signer's key nor any delegation on its chain has been revoked",
		"issue a new delegation to an unrevoked key; revocations are permanent", false},
	{RuleNoDelegation, ClassAuthority, "the signer holds a delegation from the root",
		"delegate instruct to the signer (`writ delegate`) and append it, or sign with a delegated key", false},
	{RuleOutOfScope, ClassAuthority, "a delegation of the signer grants instruct for this stream and machine",
		"delegate this stream and machine to the signer, or dispatch within its delegation", false},
	{RuleOutsideWindow, ClassAuthority, "the covering delegation is valid now and was valid when the instruction was issued",
		"sign the instruction again while a delegation of the signer covers both its issued_at and now (the reason names the instant that failed), or issue such a delegation", false},
	{RuleNotYetValid, ClassFreshness, "the instruction's window has started (not_before <= now)",
		"wait until the instruction's not_before, or check this runner's clock", false},
	{RuleExpired, ClassFreshness, "the instruction has not expired (now < expires)",
		"issue a fresh instruction; expired orders are not replayed", false},
	{RuleAgentNotPinned, ClassProvenance, "the ledger holds a pin for the agent artifact on this platform",
		"have a release engineer pin the agent (`writ pin`) and append the pin", false},
	{RulePinExpired, ClassFreshness, "the agent's latest pin has not expired",
		"have a release engineer re-pin the current agent release", false},
	{RuleAgentPinMismatch, ClassIntegrity, "the agent digest the instruction names, if any, is the latest pin's",
		"re-issue the instruction against the current pin, or pin the binary it names", false},
	{RuleAgentBinaryMissing, ClassIntegrity, "the agent binary is present and readable on this runner",
		"install the pinned agent binary at the path given to --agent-binary", false},
	{RuleAgentDigestMismatch, ClassIntegrity, "the agent binary on disk hashes to the pinned digest (computed here)",
		"do not run this binary: reinstall the agent from the pinned release, or pin the binary that should run", false},
	{RuleRollback, ClassFreshness, "the pinned version is not below the highest this runner has admitted for the artifact, unless a root-signed downgrade record allows it",
		"pin the current release again, or have the root sign a downgrade record (`writ downgrade`) if going back is intended", false},
	{RuleStaleLedger, ClassFreshness, "the ledger's newest checkpoint was signed (under --policy: cosigned by the witness quorum) within this runner's maximum ledger age",
		"sync this runner's ledger from the writer (`writ ledger sync`, or export/import) or have the writer refresh its checkpoint (`writ ledger checkpoint --refresh`, with `--policy` when runners judge witnessed time)", false},
	{RuleEngineNotNamed, ClassProvenance, "the instruction names the engine when this runner runs one (--engine-binary given)",
		"have the control plane name the engine (`writ instruct --engine NAME`) so it is checked against its pin", false},
	{RuleEngineNotPinned, ClassProvenance, "the ledger holds a pin for the engine artifact the instruction names, on this platform",
		"have a release engineer pin the engine (`writ pin`) and append the pin", false},
	{RuleEnginePinMismatch, ClassIntegrity, "the engine digest the instruction names, if any, is the latest pin's",
		"re-issue the instruction against the current engine pin", false},
	{RuleEngineBinaryMissing, ClassIntegrity, "the engine binary is present and readable on this runner",
		"install the pinned engine binary at the path given to --engine-binary", false},
	{RuleEngineDigestMismatch, ClassIntegrity, "the engine binary on disk hashes to its pinned digest (computed here)",
		"do not run this engine: reinstall it from the pinned release", false},
	{RuleBuildMismatch, ClassIntegrity, "the binary's Go build metadata, read from the file here, is the pin's",
		"re-pin the binary with `writ pin`, which reads its build metadata", false},
	{RuleDirtyBuild, ClassProvenance, "the binary was not built from a modified tree (vcs.modified is not true)",
		"rebuild the release from a clean checkout and pin that", false},
	{RuleUnknownBuild, ClassProvenance, "the binary records the source revision it was built from",
		"rebuild with version control information (no -buildvcs=false, not go run) and pin that", false},
	{RuleProvisionMissing, ClassIntegrity, "every provisioned file the instruction names is present in the provision directory",
		"ship the provisioned files with the dispatch and give their directory to --provision-dir", false},
	{RuleProvisionMismatch, ClassIntegrity, "every provisioned file hashes, here, to the digest the instruction names",
		"do not run the dispatch: the provisioned file is not the one that was signed for; ship it again", false},
	{RuleProvisionUnexpected, ClassIntegrity, "the provision directory holds only the files the instruction names",
		"remove what the instruction does not name from the provision directory (or re-issue the instruction naming it), then dispatch again", false},
	{RuleWorkspacePath, ClassContent, "R30: no token of a remote brief is an absolute path beneath the control plane's workspace root (--control-workspace)",
		"rewrite the brief without the sending host's paths: ship what the agent needs (--provision) and cite it as .provision/<name>.<ext>", false},
	{RuleProvisionCitation, ClassContent, "R37: every provisioned file a remote brief cites (.provision/<name>.<ext>) is in this dispatch's provisioning set",
		"ship the file the reason names (writ instruct --provision <source>=.provision/<name>.<ext>), or write the citation plainly", false},
	{RuleInternal, ClassInternal, "the verdict was computed without an internal error",
		"report a bug with the decision log entry; the dispatch was refused", false},
}

// LookupRule returns the rule with id, or false.
func LookupRule(id string) (Rule, bool) {
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
