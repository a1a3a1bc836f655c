// Package ledger owns writ's append-only logs: the Badger store, the
// RFC 6962 / RFC 9162 Merkle tree over its entries, signed checkpoints,
// and the verification that recomputes the tree from the stored entries.
//
// # Logs
//
// A [Log] is one Badger v4 directory holding a sequence of entries, each
// at most [MaxEntrySize] bytes, numbered from 0. An entry's bytes are the
// Merkle leaf: its leaf hash is SHA-256(0x00 || entry) (RFC 6962 §2.1).
// The interior hashes are stored as they are computed
// (golang.org/x/mod/sumdb/tlog's stored-hash layout), so the root of any
// prefix is read without rescanning the log. No method updates or deletes
// an entry: the only write is [Log.Append], which adds entries, their tree
// hashes, the new size and a newly signed checkpoint in one durable Badger
// transaction (SyncWrites on): either all of it is on disk when Append
// returns, or none of it is. Concurrent appends are batched (group
// commit): one transaction, one fsync and one checkpoint signature per
// batch, with a [Gate] deciding each entry in log order; a failed batch
// fails every append in it. Before extending a log, Append checks that
// the stored size and root are exactly those of the latest signed
// checkpoint, so a truncated or rewritten log is never re-signed.
//
// A ledger directory (package ledger/ledgerdir) holds two logs: the
// authority log and a runner's decision log, each a [Log].
//
// # Checkpoints
//
// A checkpoint is a C2SP tlog-checkpoint (c2sp.org/tlog-checkpoint): a
// signed note (c2sp.org/signed-note, golang.org/x/mod/sumdb/note) whose
// text is
//
//	<origin>\n
//	<tree size, decimal>\n
//	<root hash, standard base64>\n
//
// followed by a blank line and one Ed25519 signature line per signer. The
// note key name is the log's origin. Where writ is stricter than C2SP:
// formats.ParseCheckpoint refuses extension lines, a size with leading zeros, and
// any body that does not re-serialize to the same bytes.
//
// The formats themselves (checkpoints and their cosignatures, proofs,
// receipts) are in package ledger/formats, which imports no storage;
// this package uses its types (formats.Checkpoint, formats.InclusionProof)
// and gives them no second name.
//
// # Proofs and receipts
//
// [Log.ProveInclusion] and [Log.ProveConsistency] give RFC 9162 proofs
// from the stored hashes (no rescans); [Log.Receipt] wraps an inclusion
// proof in an RFC 9942 COSE Receipt (vds 1, detached payload: the root)
// signed by the log key, checked by [VerifyReceipt];
// [Log.CheckConsistent] tells a reader whether a log still extends a
// checkpoint it trusted before.
//
// # Publishing and replicas
//
// [Log.ReadTile], [Log.WriteTile] and [Log.ReadTiles] read a log as
// c2sp.org/tlog-tiles tiles (hash tiles, entry bundles, and writ's
// history bundles, writ/history/<N>, holding the signed checkpoint of
// every batch); package ledger/publish writes them to a directory
// (Publish) and serves them (Server). Paths, bundles and the bounded
// fetch are in ledger/tiles. The witnesses' cosignatures of the latest
// checkpoint are stored with it ([Log.AttachCosignatures],
// [Log.CosignedCheckpoint]); ledger/publish collects them
// (publish.CollectCosignatures). Package ledger/replica holds
// export, import and sync; the one write they make to a replica is a
// [ReplicaWriter] (replica.go), with [CreateReplica],
// [Log.DropUnsigned], [Log.StoreCheckpoint] and
// [Log.ReplaceHistoryCheckpoint]. Package ledger/repair rebuilds a
// damaged ledger directory.
//
// # Storage
//
// A Log stands on a [Store] (storage.go): an ordered key-value store with
// transactions ([Txn]) and prefix iterators ([Iterator]). Badger v4 is
// the one backend (store_badger.go; what a damaged store is, damage.go;
// Badger's files read without opening the store, ledger/internal/badgerfile).
// A new backend, for instance on an
// existing distributed engine such as transparency-dev/tessera's
// drivers, implements Store, Txn and Iterator; the formats
// (ledger/formats, ledger/tiles) do not import any storage.
//
// # Keys
//
// The checkpoint key and the runner key are kept in files or in a
// PKCS#11 token, as package ledger/keys says; ledgerdir.OpenDecisions makes or
// unlocks the runner key as DIR/runner.protection states.
//
// # Verification
//
// [Log.Verify] reads every entry in order, recomputes every leaf hash and
// every interior hash, compares each with the stored hash, and compares
// the recomputed root with the latest signed checkpoint. A changed,
// missing or reordered entry is reported as an [*IntegrityError] with its
// index. Memory stays constant in the log size (one hash per tree level).
package ledger
