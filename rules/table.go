package rules

// Rule ids. The vocabulary is closed: every verdict and every refused
// record names one of these. Admission rules are in All in the order the
// checks run; record rules (refusing a record at append, import or sync)
// follow.
const (
	OK                   = "ok"
	LedgerUnverified     = "ledger-unverified"
	LedgerInconsistent   = "ledger-inconsistent"
	MalformedDispatch    = "malformed-dispatch"
	WrongMachine         = "wrong-machine"
	AgentBinaryMissing   = "agent-binary-unreadable"
	AgentPinMismatch     = "agent-pin-mismatch"
	AgentDigestMismatch  = "agent-digest-mismatch"
	Unsigned             = "unsigned"
	BadSignature         = "bad-signature"
	UnknownKey           = "unknown-key"
	WrongKind            = "wrong-record-kind"
	Quarantined          = "quarantined"
	RootUntrusted        = "root-untrusted"
	LedgerUnwitnessed    = "ledger-unwitnessed"
	NotYetValid          = "instruction-not-yet-valid"
	Expired              = "instruction-expired"
	PinExpired           = "pin-expired"
	AgentNotPinned       = "agent-not-pinned"
	Internal             = "internal-error"
	Replay               = "replay"
	WorkClaimed          = "work-claimed"
	ReceiptMissing       = "receipt-missing"
	ReceiptInvalid       = "receipt-invalid"
	EngineNotNamed       = "engine-not-named"
	EngineNotPinned      = "engine-not-pinned"
	EnginePinMismatch    = "engine-pin-mismatch"
	EngineBinaryMissing  = "engine-binary-unreadable"
	EngineDigestMismatch = "engine-digest-mismatch"
	BuildMismatch        = "build-mismatch"
	DirtyBuild           = "dirty-build"
	UnknownBuild         = "unknown-build"
	Rollback             = "rollback"
	StaleLedger          = "stale-ledger"
	ProvisionMissing     = "provision-unreadable"
	ProvisionMismatch    = "provision-digest-mismatch"
	ProvisionUnexpected  = "provision-unexpected"
	WorkspacePath        = "r30-workspace-path"
	ProvisionCitation    = "r37-provision-citation"
	NoDelegation         = "no-delegation"
	OutOfScope           = "out-of-scope"
	OutsideWindow        = "outside-window"
	Revoked              = "revoked"
	RootExpired          = "root-expired"
	Malformed            = "malformed-record"
	Threshold            = "threshold-not-met"
	NotAttenuated        = "exceeds-parent"
	RootVersion          = "root-version"
	UnknownTarget        = "unknown-target"
	NotSupportedYet      = "not-supported"
	Duplicate            = "duplicate-record"
	RootKey              = "root-key"
	Superseded           = "superseded-record"
	IssuedAt             = "issued-at-range"
	VKeyMismatch         = "vkey-mismatch"
	NothingVerified      = "nothing-verified"
	// PolicyRefused: the runner's admission policy (package policy)
	// refused; the verdict names the policy's own rule (policy_rule).
	PolicyRefused = "policy-refused"
	// Provenance rules refuse a pin whose provenance attestation does not
	// vouch for the binary (writ pin --provenance; package provenance).
	ProvenanceMalformed = "provenance-malformed"
	ProvenanceSignature = "provenance-signature"
	ProvenanceSubject   = "provenance-subject"
	ProvenanceBuilder   = "provenance-builder"
	ProvenanceSource    = "provenance-source"
	ProvenanceDirty     = "provenance-dirty"
	// ProvenanceRequired refuses at admission a dispatch whose signer's
	// instruct delegation lists builders while a binary it runs is
	// pinned without provenance from one of them.
	ProvenanceRequired = "provenance-required"
	// Store rules refuse a log whose Badger store is damaged on disk
	// (package ledger, *ledger.StoreError), at whatever command opens it.
	StoreDamaged     = "store-damaged"
	StoreUnrecovered = "store-unrecoverable"
)

// All is the rule vocabulary: one row per rule id, with its class, what
// it checks, and the next act for the operator where it can fail
// (NextAct at admission, AppendAct when a record is refused, StoreAct
// when a log's store is refused). `writ admit
// --rules` prints the admission rules; verify.Rules is the same list.
var All = []Rule{
	{ID: OK, Class: ClassPass, Summary: "every check that ran passed",
		NextAct: "none"},
	{ID: LedgerUnverified, Class: ClassIntegrity, Summary: "the runner's copy of the ledger verifies against its signed checkpoint, entry by entry",
		NextAct: "do not trust this ledger copy: run `writ ledger verify` for the evidence and restore it from a verified export"},
	{ID: VKeyMismatch, Class: ClassIntegrity, Summary: "the log's checkpoints are signed by the verifier key given (--vkey, --decisions-vkey, a fleet file's key) or, without one, by the key its replica or state stored",
		NextAct:   "do not use this ledger: its checkpoints are not signed by the key this runner was set up with; compare the key ids in the reason with `writ ledger vkey` on the writer",
		ReportAct: "check the key you gave against `writ ledger vkey` on the writer; if the log's key really changed, make a new replica (or state file) with the new key after finding out why"},
	{ID: LedgerInconsistent, Class: ClassIntegrity, Summary: "the authority log extends the one this runner last trusted (same origin, no smaller, consistency proof to the trusted root)",
		NextAct: "treat the ledger as rolled back or forked: compare both checkpoints in the reason with the auditors' and restore a consistent copy"},
	{ID: RootUntrusted, Class: ClassIntegrity, Summary: "the ledger's first root is the one given with --trust-root (by digest)",
		NextAct:   "do not use this ledger: its root of trust is not the one this runner was set up with",
		ReportAct: "check the digest you gave against the one `writ root sign` printed for the first root; a replica or cache of another root is not this ledger"},
	{ID: LedgerUnwitnessed, Class: ClassIntegrity, Summary: "the authority log's checkpoint is cosigned by the quorum of this runner's witness policy (--policy, c2sp.org/tlog-policy)",
		ReportAct: "have the writer collect its witnesses' cosignatures (`writ ledger checkpoint --refresh --policy`), then run again; if a witness refused it, treat the log as split",
		NextAct:   "sync again once the writer has collected its witnesses' cosignatures (`writ ledger checkpoint --refresh --policy`); if a witness refused it, treat the log as split: compare the writer's checkpoint with the witnesses'"},
	{ID: MalformedDispatch, Class: ClassIntegrity, Summary: "the dispatch is a canonical tagged COSE envelope of an instruction, or a canonical bare instruction record",
		NextAct: "regenerate the instruction with `writ instruct`; never edit one by hand"},
	{ID: Unsigned, Class: ClassAuthenticity, Summary: "the instruction is signed",
		NextAct:          "have the control plane sign instructions (`writ instruct --key`)",
		BeforeEnforceAct: "before tightening to enforce, run warn and audit what it would refuse"},
	{ID: WrongKind, Class: ClassAuthenticity, Summary: "the envelope was signed as an instruction, not as another record kind",
		NextAct:   "dispatch an instruction record; a pin or delegation is never an order",
		AppendAct: "this kind of record cannot stand here; check the file is the one you meant"},
	{ID: BadSignature, Class: ClassAuthenticity, Summary: "every signature by a key the ledger trusts verifies over the bytes received",
		NextAct:   "treat the dispatch as forged or corrupted: do not run it, and find out where it was altered",
		AppendAct: "the record was changed after signing, or signed over other bytes; sign it again", Always: true},
	{ID: UnknownKey, Class: ClassAuthenticity, Summary: "the signer's key is trusted by this runner's ledger",
		NextAct:   "delegate to the signer's key and sync the ledger, or sign with a key that holds a delegation",
		AppendAct: "append the delegation that introduces the signing key first (`writ delegate`), or sign with a key the ledger knows"},
	{ID: WrongMachine, Class: ClassIntegrity, Summary: "the instruction names this machine",
		NextAct: "dispatch the instruction to the machine it names, or issue one for this machine"},
	{ID: Replay, Class: ClassIntegrity, Summary: "the instruction id was never admitted on this runner before (in any mode, across restarts)",
		NextAct: "do not re-send an instruction: issue a new one (`writ instruct` gives every instruction a new id)"},
	{ID: WorkClaimed, Class: ClassIntegrity, Summary: "no other session holds a live work claim on the instruction's stream",
		NextAct: "wait until the claim named in the reason expires or its session releases it (an instruction with --release-claim), then dispatch again"},
	{ID: ReceiptMissing, Class: ClassIntegrity, Summary: "a receipt accompanies the dispatch (only with --require-receipt)",
		NextAct: "append the instruction to the authority log, fetch its receipt (`writ ledger receipt`), sync this runner's ledger, and send both"},
	{ID: ReceiptInvalid, Class: ClassIntegrity, Summary: "the receipt proves, under the authority log's key, that these exact dispatch bytes are in the authority log at or below a checkpoint this runner verified",
		NextAct: "sync this runner's ledger to a checkpoint that covers the receipt, or fetch a receipt for these exact bytes"},
	{ID: RootExpired, Class: ClassAuthority, Summary: "the ledger's root has not expired",
		NextAct:   "an expired root trusts nothing and cannot be rotated (rotate it before it expires: `writ root sign --previous`); make a new ledger with a new root and append its records again",
		AppendAct: "an expired root trusts nothing and cannot be rotated (rotate before it expires, `writ root sign --previous`); start a new ledger with a new root"},
	{ID: Quarantined, Class: ClassAuthority, Summary: "no signed quarantine drains this machine now",
		NextAct: "wait for the quarantine to end, or have it lifted (`writ quarantine --lift`): by the root threshold when the root quarantined the machine, else by a key holding quarantine for it", Always: true},
	{ID: Revoked, Class: ClassAuthority, Summary: "neither the signer's key nor any delegation on its chain has been revoked",
		NextAct:   "issue a new delegation to an unrevoked key; revocations are permanent",
		AppendAct: "the signer or a delegation behind it is revoked; sign with a key that is not"},
	{ID: NoDelegation, Class: ClassAuthority, Summary: "the signer holds a delegation from the root",
		NextAct:   "delegate instruct to the signer (`writ delegate`) and append it, or sign with a delegated key",
		AppendAct: "delegate the signing key first (`writ delegate --to KEY.pub --action ...`) and append that"},
	{ID: OutOfScope, Class: ClassAuthority, Summary: "a delegation of the signer grants instruct for this stream and machine",
		NextAct:   "delegate this stream and machine to the signer, or dispatch within its delegation",
		AppendAct: "sign with a key whose delegation covers this, or delegate it (`writ delegate`); `writ authority explain` shows what the key holds"},
	{ID: OutsideWindow, Class: ClassAuthority, Summary: "the covering delegation is valid now and was valid when the instruction was issued",
		NextAct:   "sign the instruction again while a delegation of the signer covers both its issued_at and now (the reason names the instant that failed), or issue such a delegation",
		AppendAct: "sign the record again while its signer's delegation covers both its issued_at and the time of the append (the reason names the instant that failed), or renew the delegation"},
	{ID: NotYetValid, Class: ClassFreshness, Summary: "the instruction's window has started (not_before <= now)",
		NextAct: "wait until the instruction's not_before, or check this runner's clock"},
	{ID: Expired, Class: ClassFreshness, Summary: "the instruction has not expired (now < expires)",
		NextAct: "issue a fresh instruction; expired orders are not replayed"},
	{ID: AgentNotPinned, Class: ClassProvenance, Summary: "the ledger holds a pin for the agent artifact on this platform",
		NextAct: "have a release engineer pin the agent (`writ pin`) and append the pin"},
	{ID: PinExpired, Class: ClassFreshness, Summary: "the agent's latest pin has not expired",
		NextAct: "have a release engineer re-pin the current agent release"},
	{ID: AgentPinMismatch, Class: ClassIntegrity, Summary: "the agent digest the instruction names, if any, is the latest pin's",
		NextAct: "re-issue the instruction against the current pin, or pin the binary it names"},
	{ID: AgentBinaryMissing, Class: ClassIntegrity, Summary: "the agent binary is present and readable on this runner",
		NextAct: "install the pinned agent binary at the path given to --agent-binary"},
	{ID: AgentDigestMismatch, Class: ClassIntegrity, Summary: "the agent binary on disk hashes to the pinned digest (computed here)",
		NextAct: "do not run this binary: reinstall the agent from the pinned release, or pin the binary that should run"},
	{ID: Rollback, Class: ClassFreshness, Summary: "the pinned version is not below the highest this runner has admitted for the artifact, unless a root-signed downgrade record allows it",
		NextAct: "pin the current release again, or have the root sign a downgrade record (`writ downgrade`) if going back is intended"},
	{ID: StaleLedger, Class: ClassFreshness, Summary: "the ledger's newest checkpoint was signed (under --policy: cosigned by the witness quorum) within this runner's maximum ledger age",
		NextAct: "sync this runner's ledger from the writer (`writ ledger sync`, or export/import) or have the writer refresh its checkpoint (`writ ledger checkpoint --refresh`, with `--policy` when runners judge witnessed time)"},
	{ID: ProvenanceRequired, Class: ClassProvenance, Summary: "when the delegation under which the instruction's signer instructs lists builders (writ delegate --action instruct --builder), the agent and engine it runs are pinned with build provenance from one of them",
		NextAct: "pin the release with its build provenance from one of the delegation's builders (`writ pin --provenance`), or have the instruction signed under a delegation that does not demand it"},
	{ID: EngineNotNamed, Class: ClassProvenance, Summary: "the instruction names the engine when this runner runs one (--engine-binary given)",
		NextAct: "have the control plane name the engine (`writ instruct --engine NAME`) so it is checked against its pin"},
	{ID: EngineNotPinned, Class: ClassProvenance, Summary: "the ledger holds a pin for the engine artifact the instruction names, on this platform",
		NextAct: "have a release engineer pin the engine (`writ pin`) and append the pin"},
	{ID: EnginePinMismatch, Class: ClassIntegrity, Summary: "the engine digest the instruction names, if any, is the latest pin's",
		NextAct: "re-issue the instruction against the current engine pin"},
	{ID: EngineBinaryMissing, Class: ClassIntegrity, Summary: "the engine binary is present and readable on this runner",
		NextAct: "install the pinned engine binary at the path given to --engine-binary"},
	{ID: EngineDigestMismatch, Class: ClassIntegrity, Summary: "the engine binary on disk hashes to its pinned digest (computed here)",
		NextAct: "do not run this engine: reinstall it from the pinned release"},
	{ID: BuildMismatch, Class: ClassIntegrity, Summary: "the binary's Go build metadata, read from the file here, is the pin's",
		NextAct: "re-pin the binary with `writ pin`, which reads its build metadata"},
	{ID: DirtyBuild, Class: ClassProvenance, Summary: "the binary was not built from a modified tree (vcs.modified is not true)",
		NextAct: "rebuild the release from a clean checkout and pin that"},
	{ID: UnknownBuild, Class: ClassProvenance, Summary: "the binary records the source revision it was built from",
		NextAct: "rebuild with version control information (no -buildvcs=false, not go run) and pin that"},
	{ID: ProvisionMissing, Class: ClassIntegrity, Summary: "every provisioned file the instruction names is present in the provision directory",
		NextAct: "ship the provisioned files with the dispatch and give their directory to --provision-dir"},
	{ID: ProvisionMismatch, Class: ClassIntegrity, Summary: "every provisioned file hashes, here, to the digest the instruction names",
		NextAct: "do not run the dispatch: the provisioned file is not the one that was signed for; ship it again"},
	{ID: ProvisionUnexpected, Class: ClassIntegrity, Summary: "the provision directory holds only the files the instruction names",
		NextAct: "remove what the instruction does not name from the provision directory (or re-issue the instruction naming it), then dispatch again"},
	{ID: WorkspacePath, Class: ClassContent, Summary: "R30: no token of a remote brief is an absolute path beneath the control plane's workspace root (--control-workspace)",
		NextAct: "rewrite the brief without the sending host's paths: ship what the agent needs (--provision) and cite it as .provision/<name>.<ext>"},
	{ID: ProvisionCitation, Class: ClassContent, Summary: "R37: every provisioned file a remote brief cites (.provision/<name>.<ext>) is in this dispatch's provisioning set",
		NextAct: "ship the file the reason names (writ instruct --provision <source>=.provision/<name>.<ext>), or write the citation plainly"},
	{ID: PolicyRefused, Class: ClassPolicy, Summary: "no rule of this runner's admission policy (--policy-cel, CEL) refuses the dispatch; it runs after every built-in check and only refuses",
		NextAct: "the policy rule named in the reason refuses this dispatch: change the dispatch, or, if the rule is wrong, the runner's policy file"},
	{ID: Internal, Class: ClassInternal, Summary: "the verdict was computed without an internal error",
		NextAct: "report a bug with the decision log entry; the dispatch was refused"},
	{ID: Malformed, Class: ClassIntegrity, Summary: "the record is a canonical envelope of a known record kind, with every field rule of package schemas",
		AppendAct: "the file is not a signed writ record envelope; make it with the writ command for its kind (an unsigned instruction cannot enter the ledger: sign it with `writ instruct --key`)"},
	{ID: Threshold, Class: ClassAuthenticity, Summary: "a root act carries signatures by at least the threshold of distinct root keys",
		AppendAct: "sign with the root threshold's keys (repeat --key)"},
	{ID: NotAttenuated, Class: ClassAuthority, Summary: "a re-delegation is within the delegation behind it: actions, patterns, window and depth",
		AppendAct: "narrow the re-delegation to within its parent (`writ authority explain` shows the parent's scope)"},
	{ID: RootVersion, Class: ClassAuthority, Summary: "a rotated root is exactly version v+1 of the root in force, signed by its threshold",
		AppendAct: "make the next root with `writ root sign --previous` over the ledger's current root"},
	{ID: UnknownTarget, Class: ClassIntegrity, Summary: "a revocation names a key or record this ledger holds",
		AppendAct: "revoke by the digest of a record this ledger holds, or by key id"},
	{ID: NotSupportedYet, Class: ClassIntegrity, Summary: "the act is one this version of writ can apply",
		AppendAct: ""},
	{ID: Duplicate, Class: ClassIntegrity, Summary: "the same signed content is not already in the log",
		AppendAct: "nothing to do: the ledger already holds this record"},
	{ID: RootKey, Class: ClassAuthority, Summary: "a revocation does not target a key of the root in force (rotate the root instead)",
		AppendAct: "rotate the root instead: `writ root sign --previous ROOT --key ... --pub ...` listing the keys to keep, then `writ ledger append` it"},
	{ID: Superseded, Class: ClassAuthority, Summary: "a quarantine act was issued after the machine's act in force",
		AppendAct: "the machine's quarantine in force was issued later than this act: sign a new act now if it should still apply"},
	{ID: IssuedAt, Class: ClassFreshness, Summary: "a record's issued_at is at most 5 minutes after, and at most 24 hours before, the time the ledger accepted it",
		AppendAct: "sign the record again now and append it within 24 hours: its issued_at must be at most 5 minutes after, and at most 24 hours before, the time the ledger accepts it (check this machine's clock)"},
	{ID: NothingVerified, Class: ClassIntegrity, Summary: "a report says ok only when it verified something: a fleet audit needs at least one runner's decision log",
		ReportAct: "name the runners to audit in the fleet file (`runner NAME URL VKEY` lines): an audit of no runner checks no decision"},
	{ID: StoreDamaged, Class: ClassIntegrity, Summary: "a log's Badger store is whole: its MANIFEST lists every table that holds data, each listed table is there and reads back, its value and write-ahead logs open",
		StoreAct: "run `writ ledger repair --dir DIR`: it moves the damaged store into DIR/set-aside/ (nothing is deleted), rebuilds it from the files that read back, keeps the result only if every entry verifies against the log's signed checkpoint, says what it did, and `writ ledger repair --dir DIR --undo` puts everything back"},
	{ID: StoreUnrecovered, Class: ClassIntegrity, Summary: "a damaged log store still holds, in the files that read back, every entry its signed checkpoint covers",
		StoreAct: "restore the ledger from an export with `writ ledger repair --dir DIR --from EXPORT` (the damaged store is set aside, the export is imported with every check `writ ledger import` runs, and --undo puts it back), or make a new replica from the log's publication with `writ ledger sync --dir NEWDIR --from URL --vkey KEY`"},
	{ID: ProvenanceMalformed, Class: ClassProvenance, Summary: "the provenance is a DSSE envelope, or a Sigstore bundle holding one, of an in-toto statement with an SLSA provenance v1 predicate, well formed, and its trusted root one",
		ReportAct: "give the attestation the builder wrote (a DSSE envelope or Sigstore bundle, as cosign attest-blob or the SLSA generator writes it), unedited, and the trusted root as its instance publishes it",
		AppendAct: "the pin's provenance does not check out: pin the binary again from the builder's own attestation"},
	{ID: ProvenanceSignature, Class: ClassProvenance, Summary: "the provenance is signed by the key given for it (--provenance-key), or, keyless, by a certificate the trusted root given (--provenance-root) issued, logged and timestamped as the root requires",
		ReportAct: "give the builder's public key, or the trusted root of the Sigstore instance that certified it; an attestation that does not verify under it is not the builder's",
		AppendAct: "the pin's provenance is not signed by the key it records: pin the binary again from the builder's own attestation"},
	{ID: ProvenanceSubject, Class: ClassProvenance, Summary: "the provenance's subject names the pinned binary's SHA-256 digest",
		ReportAct: "pin the binary the attestation was made for, or attest this one",
		AppendAct: "the pin's provenance is another binary's: pin the binary the attestation was made for"},
	{ID: ProvenanceBuilder, Class: ClassProvenance, Summary: "the provenance's builder id is one the pin allows (--builder)",
		ReportAct: "build the release on an allowed builder, or allow this builder if it is one you trust",
		AppendAct: "the signer's delegation demands provenance from its builders: pin a build from one of them with its attestation (`writ pin --provenance`)"},
	{ID: ProvenanceSource, Class: ClassProvenance, Summary: "the provenance's source commit (and repository, where the binary's module path names one) is the revision the Go binary records",
		ReportAct: "pin the binary the builder built from that commit; a binary that records another revision was not built by it",
		AppendAct: "the pin's provenance names another source than the binary records: pin the binary the builder built"},
	{ID: ProvenanceDirty, Class: ClassProvenance, Summary: "a binary pinned with provenance was built from a clean tree (vcs.modified false)",
		ReportAct: "rebuild the release from a clean checkout on the builder and pin that",
		AppendAct: "a binary of a modified tree cannot carry provenance: pin a clean build"},
}
