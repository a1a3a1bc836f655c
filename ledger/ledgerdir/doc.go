// Package ledgerdir is a ledger directory: which files it holds, how its
// logs (each a [ledger.Log]) are created and opened, and its keys.
//
// A ledger directory holds two logs, kept apart so that a runner's
// decisions never mix with authority:
//
//	DIR/authority/       the authority log: root, delegations, pins, instructions
//	DIR/checkpoint.key   the authority log's checkpoint key (age-encrypted, 0600)
//	DIR/checkpoint.pub   its public key (PEM PKIX)
//	DIR/decisions/       the runner's decision log
//	DIR/runner.key       the runner's key, which signs the decision log's checkpoints
//	DIR/runner.pub
//	DIR/runner.protection how runner.key is kept, chosen at the first admission ([keys.Protection])
//
// [Dir] names these files and opens the logs (for reading, for an export,
// or with the checkpoint key unlocked); [Dir.Init] creates a ledger
// directory atomically, removing what it made when any step fails.
package ledgerdir
