// Package witness is a C2SP transparency log witness
// (c2sp.org/tlog-witness) and its client. A witness cosigns a log's
// checkpoint (c2sp.org/tlog-checkpoint) only when it is consistent with
// the last checkpoint it cosigned for that log, so a log that shows one
// view to some clients and another to others (a split view) cannot get
// both cosigned by the same witness; clients that require a quorum of
// witnesses' cosignatures (c2sp.org/tlog-cosignature) see one history.
//
// The package imports no storage engine and not package ledger: it reads
// the logs of any implementation (writ's, Tessera's, a Go checksum
// database), checkpoint extension lines included.
//
// # Protocol
//
// [Witness.Handler] serves POST /add-checkpoint and GET
// /<sha256 hex of origin>/checkpoint (the "Monitor Retrieval Mechanism"),
// with both prefixes at the root; the optional sign-subtree call is not
// served. Cosignatures are cosignature/v1 (Ed25519, key type 0x04), whose
// key id commits to the witness's name: the name is part of its identity.
// [Client] is the log's side: it submits checkpoints with consistency
// proofs and maps each status to an error a caller branches on.
//
// Where torchwood's litewitness answers 403 for a checkpoint of an
// unknown origin, this witness answers 404, as the specification says.
//
// # State
//
// Config.Dir holds:
//
//	Dir/               locked with flock (LOCK_EX) while a Witness is open
//	Dir/logs/<H>       one file per log that was cosigned, H = OriginHash(origin)
//
// A state file holds exactly what GET serves: the last cosigned
// checkpoint's note text (extension lines included), a blank line, the
// signature lines of the log's configured keys that verified (in the order
// received; other signatures on the submitted checkpoint are dropped), and
// the witness's cosignature line. The size and root hash the witness
// holds are read from it. It is at most MaxCheckpointSize bytes, mode 0600.
// It is written to Dir/logs/<H>.tmp, fsynced, renamed over Dir/logs/<H>,
// and the directory fsynced, all before the 200 answer, under the log's
// lock that also orders the check of the request's old size, so two
// concurrent requests cannot roll the state back.
//
// On open, each configured log's file is verified again: its origin, its
// log signatures under the configured keys, exactly one other signature
// line which must be this witness's cosignature, and the exact form the
// witness writes. A file that fails is ErrCorruptState naming the file:
// the witness does not start, and never resets a log it cosigned.
// Leftover .tmp files (a write interrupted by a crash, never
// acknowledged) are removed; any other name in Dir/logs is refused.
// Files of logs no longer configured are left unread.
package witness
