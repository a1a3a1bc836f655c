// Package runner is a runner's admission at its ledger directory: the
// stateful side of package verify's verdict engine.
//
// A [Runner] holds a runner's ledger directory open: its decision log
// (signed by the runner key) and a verified snapshot of the authority log,
// read read-only and rebuilt when the log's files change, each new
// snapshot checked to extend the last one and the checkpoint the runner
// trusted. [Runner.Admit] runs the checks in parallel across callers, then
// under one lock checks the runner's history, fixes the verdict, and
// queues the decision; it returns after the decision is durable. The
// history is verify.History:
//
//   - replay: an instruction id is admitted at most once per runner, in
//     every mode, across restarts. The decision that admitted it is found
//     through a lookup key written in the same transaction
//     (ledger.Log.EnqueueWithKeys) and read back proven against the signed
//     checkpoint; a refused id may come again. An audit (package verify/audit) fails
//     on an id admitted twice.
//   - work-claimed: an admitted instruction with a claim (schemas.Claim)
//     holds its stream for the claim's session until claim.until
//     (exclusive, at most 30 days after issued_at); instructions for the
//     stream from another session, or from none, are refused until then,
//     or until the same session's instruction with release set is
//     admitted. A refused instruction never claims or releases.
//   - receipt-missing, receipt-invalid: with Config.RequireReceipt, the
//     dispatch must come with an RFC 9942 receipt (ledger.VerifyReceipt)
//     for its exact bytes, under the authority log's key, over a tree of
//     at most the verified checkpoint's size whose root is that
//     checkpoint's or is proven its prefix (RFC 9162 §2.1.4): a control
//     plane cannot have a runner execute what auditors will never see.
//
// `writ admission serve` is a Runner behind a UNIX socket; `writ admit`
// is [AdmitAtLedger], a Runner opened for one admission. A [Replica]
// keeps a runner's authority log current from a published log, and
// [ImportLedger] from an export, each replaying every new record as the
// writer's append judged it.
package runner
