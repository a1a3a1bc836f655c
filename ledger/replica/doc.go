// Package replica copies writ's logs from one place to another, trusting
// nothing on the way: [Export] writes the logs of a ledger directory, at
// their signed checkpoints, to one portable file (the format is in the
// doc of [ExportReader]); [Import] copies one into a replica after
// verifying it and its consistency with what the replica holds; [Sync]
// grows a replica from a published c2sp.org/tlog-tiles log (as
// ledger/publish.Publish writes it, or ledger/publish.Server serves it), proving
// every new entry into the signed root from the replica's own compact
// range (hash tiles are never trusted), all or nothing, and proving the
// checkpoints others were shown ([SeenCheckpoint]) consistent with it.
//
// Import and Sync write through one ledger.ReplicaWriter, so a replica is
// grown the same way from either source: entries in batches, the signed
// checkpoint with the last, and every entry removed again on a refusal.
// A sync reads as fetch (the entry bundles, prefetched), verify (each
// entry against the replica's tree and the history), write, finish (the
// root, the history's end, the checks, the checkpoint): syncextend.go.
package replica
