// Package logservice is writ's writer service for an authority log
// (`writ ledger serve --write`) and its client (`writ ledger append
// --to`): a control plane submits signed records over HTTPS, the service
// checks each exactly as `writ ledger append` does, commits many
// submitters' records together and answers each, once durable, with its
// index, the signed checkpoint that includes it and its inclusion proof,
// which the client verifies under the log's verifier key before it
// reports the record appended. The same process serves the log's
// c2sp.org/tlog-tiles read API, so runners sync from it.
package logservice
