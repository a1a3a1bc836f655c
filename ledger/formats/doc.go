// Package formats holds the byte formats of writ's logs, with no storage
// behind them: signed checkpoints (c2sp.org/tlog-checkpoint over
// c2sp.org/signed-note), their timestamped cosignatures
// (c2sp.org/tlog-cosignature, cosignature/v1), Merkle inclusion and
// consistency proofs (RFC 9162 §2.1.3, §2.1.4) and COSE Receipts
// (RFC 9942). Tiles and bundles are in package ledger/tiles.
//
// Everything here is a pure function of its bytes and keys: the package
// imports no storage engine (no Badger) and not package ledger, so a
// verifier, a witness or a monitor can check what a log publishes without
// linking a database. Package ledger, which stores the logs, builds on it
// and re-exports its names under their old ones.
//
// # Checkpoints
//
// A checkpoint is a signed note whose text is
//
//	<origin>\n
//	<tree size, decimal>\n
//	<root hash, standard base64>\n
//
// followed by a blank line and one signature line per signer. The note key
// name is the log's origin. Where writ is stricter than C2SP:
// [ParseCheckpoint] refuses extension lines, a size with leading zeros,
// and any body that does not re-serialize to the same bytes.
//
// A log signs each checkpoint twice with its key: the Ed25519 signed-note
// signature ([NewNoteSigner], checked by [OpenCheckpoint]) and a
// cosignature/v1 over the same body that carries the time of signing
// ([NewCosigner], checked by [OpenTimedCheckpoint], [CheckpointTime] and
// [CosigVerifier]).
package formats
