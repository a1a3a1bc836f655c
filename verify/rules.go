package verify

import "github.com/writ-ledger/writ/rules"

// Class groups rules by what they protect (rules.Class): the class decides
// whether the enforcement mode governs the rule.
type Class = rules.Class

// Rule classes (package rules).
const (
	ClassPass         = rules.ClassPass
	ClassIntegrity    = rules.ClassIntegrity
	ClassAuthenticity = rules.ClassAuthenticity
	ClassAuthority    = rules.ClassAuthority
	ClassFreshness    = rules.ClassFreshness
	ClassProvenance   = rules.ClassProvenance
	ClassContent      = rules.ClassContent
	ClassInternal     = rules.ClassInternal
)

// Rule is one row of writ's one rule vocabulary (package rules).
type Rule = rules.Rule

// Rule ids an admission verdict names: the ids of package rules, under
// the names this package has always exported.
const (
	RuleOK                   = rules.OK
	RuleLedgerUnverified     = rules.LedgerUnverified
	RuleLedgerInconsistent   = rules.LedgerInconsistent
	RuleMalformedDispatch    = rules.MalformedDispatch
	RuleWrongMachine         = rules.WrongMachine
	RuleAgentBinaryMissing   = rules.AgentBinaryMissing
	RuleAgentPinMismatch     = rules.AgentPinMismatch
	RuleAgentDigestMismatch  = rules.AgentDigestMismatch
	RuleUnsigned             = rules.Unsigned
	RuleBadSignature         = rules.BadSignature
	RuleUnknownKey           = rules.UnknownKey
	RuleWrongKind            = rules.WrongKind
	RuleQuarantined          = rules.Quarantined
	RuleRootUntrusted        = rules.RootUntrusted
	RuleVKeyMismatch         = rules.VKeyMismatch
	RuleLedgerUnwitnessed    = rules.LedgerUnwitnessed
	RuleNotYetValid          = rules.NotYetValid
	RuleExpired              = rules.Expired
	RulePinExpired           = rules.PinExpired
	RuleAgentNotPinned       = rules.AgentNotPinned
	RuleInternal             = rules.Internal
	RuleReplay               = rules.Replay
	RuleWorkClaimed          = rules.WorkClaimed
	RuleReceiptMissing       = rules.ReceiptMissing
	RuleReceiptInvalid       = rules.ReceiptInvalid
	RuleEngineNotNamed       = rules.EngineNotNamed
	RuleEngineNotPinned      = rules.EngineNotPinned
	RuleEnginePinMismatch    = rules.EnginePinMismatch
	RuleEngineBinaryMissing  = rules.EngineBinaryMissing
	RuleEngineDigestMismatch = rules.EngineDigestMismatch
	RuleBuildMismatch        = rules.BuildMismatch
	RuleDirtyBuild           = rules.DirtyBuild
	RuleUnknownBuild         = rules.UnknownBuild
	RuleRollback             = rules.Rollback
	RuleStaleLedger          = rules.StaleLedger
	RuleProvisionMissing     = rules.ProvisionMissing
	RuleProvisionMismatch    = rules.ProvisionMismatch
	RuleProvisionUnexpected  = rules.ProvisionUnexpected
	RuleWorkspacePath        = rules.WorkspacePath
	RuleProvisionCitation    = rules.ProvisionCitation
	RuleNoDelegation         = rules.NoDelegation
	RuleOutOfScope           = rules.OutOfScope
	RuleOutsideWindow        = rules.OutsideWindow
	RuleRootExpired          = rules.RootExpired
	RuleRevoked              = rules.Revoked
)

// Rules is the admission rule vocabulary, in the order checks run
// (rules.Admission). `writ admit --rules` prints it; the package doc's
// table is the same list.
var Rules = rules.Admission()

// LookupRule returns the admission rule with id, or false: also for a
// rule of package rules that only refuses records (threshold-not-met,
// exceeds-parent, ...), which no verdict may name; a verdict under such
// a rule is an internal error, refused in every mode.
func LookupRule(id string) (Rule, bool) {
	if r, ok := rules.Lookup(id); ok && r.NextAct != "" {
		return r, true
	}
	return Rule{}, false
}
