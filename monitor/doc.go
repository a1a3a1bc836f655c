// Package monitor follows a published writ authority log and reports the
// new records that touch what its user watches: a delegation to or from
// a key, a revocation of a key or of a record it reported, a pin or a
// downgrade of an artifact, a quarantine of a machine, a delegation over
// a stream, and every root record. It is writ's answer to what
// rekor-monitor does for Rekor: run from cron or CI, it exits non-zero
// when something it was told to alert on appears.
//
// Every record it reports is verified first, as `writ ledger sync`
// verifies (verify/runner.Replica: the signed checkpoint under the key
// the user trusts, the tree, every record's signatures and authority at
// the time the log accepted it); a log that forked from, or rolled back
// behind, what an earlier run saw is refused with the evidence. Its
// position (the tree size and root it last reported up to) and the
// digests of the records it reported (so that their revocation is
// recognised) are kept in a state file between runs; the replica it
// syncs is kept beside it, so each run fetches only what is new.
package monitor
