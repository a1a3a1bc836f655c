// Package audit is the auditor's end-to-end check of a ledger: it
// verifies both logs of a ledger directory ([Dir]), an export file
// ([ExportFile]) or a fleet's published logs ([RunFleet]), replays every
// authority record, and counts the decisions by verdict, rule, mode,
// machine, stream, signer and day ([Report], [Traffic]).
//
// # One driver, two sources
//
// [Run] reads every [Source] the same way: the authority log first (its
// entries, tree and signed checkpoint verified, every record's
// signatures and authority replayed in log order at the time the log
// accepted it, its first root checked against Options.TrustRoot and its
// checkpoint against the witness Options.Policy), then the decision log,
// if any (its origin bound to the authority log and the runner key that
// signs it, every decision decoded strictly, the authority checkpoint
// each decision names found in the authority log, no instruction id
// admitted twice and no high-water mark lowered). A source only says how
// its logs are opened and read: a directory in place, an export as it
// streams past. A fleet's runners share one authority log: [RunFleet]
// verifies and replays it once, and each runner's audit takes that
// verification in and binds the runner's decision log to it.
//
// # What the verification rests on
//
// Each log is checked under a verifier key the caller gave, else the one
// the auditor's state file remembers, else the one the log carries
// ([Trust] says which, and whether the audit is independent of the
// ledger). With Options.StateFile the auditor keeps the checkpoints it
// trusted: a later audit proves each log extends them, and a fork or a
// rollback fails with both signed checkpoints and the proof
// ([Failure].Evidence).
//
// # Failures
//
// A ledger that does not verify is a [Report] with OK false and a
// [Failure]: the log, the entry, the stable rule id where there is one,
// the evidence, and the typed cause. Run's error is only for a source
// that cannot be read at all.
package audit
