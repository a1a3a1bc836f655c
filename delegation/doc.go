// Package delegation owns authority: the root of trust, the delegations
// issued under it, the pins those delegations allow, and the one question
// every other package asks, "may key K do action A on this stream, machine
// or artifact at instant T, and if not, which rule says no?"
//
// # State
//
// A [State] is built by applying the authority log's entries in order with
// [State.Apply]. Entry 0 must be a root record signed by at least its own
// threshold of its own keys. Every later entry must be a signed record
// whose signatures verify under keys earlier records introduced (and no
// others), and whose signer is authorized for it under the time rule
// below:
//
//   - a root is a rotation: exactly version v+1, signed by root v's
//     threshold of root v's keys and by its own threshold of its own
//     keys, while root v is unexpired; from then on it is the root;
//   - a delegation is signed by the current root's threshold of distinct,
//     unrevoked root keys (counted by public key, never by key id or
//     signature entry; keys of an earlier root count for nothing, and a
//     root act they sign is refused under threshold-not-met naming the
//     rotation), or by one delegate whose unrevoked "delegate" grant, valid
//     at the child's issued_at, it attenuates: a subset of the actions,
//     patterns within the patterns, a window inside the window, and a
//     depth strictly smaller;
//   - a revocation voids a key (by key id) or a delegation, pin or issuer
//     record (by record digest) from its ledger position on, permanently;
//     it is signed by the root threshold, or by one key that holds
//     "revoke" and could have issued the target (the delegation's issuer;
//     a delegator of the key; a key that may pin the artifact). A key of
//     the root in force is never revoked (rule root-key): root keys are
//     replaced by rotating the root, and a rotation may not list a
//     revoked key (rule revoked), so no revoked key ever counts toward a
//     threshold;
//   - an issuer record is signed by the root threshold;
//   - a quarantine (or its lift) is signed by the root threshold or by a
//     key holding "quarantine" for the machine;
//   - a pin is signed by a key holding "pin" for its artifact; an
//     instruction by a key holding "instruct" for its stream and machine.
//
// A record that fails any check is refused with an error and never enters
// the state, so later records cannot lean on it.
//
// # Time
//
// Every act of every kind is judged at times its signer does not choose.
// The authority log keeps the signed checkpoint of every batch it
// commits (ledger.Log.HasHistory); the time the log accepted a record is
// the signed time of the first checkpoint that covers it, the checkpoint
// of its batch. The writer judges each record at exactly that time, and a
// replica, an import and an auditor replay the log at the same times from
// the same checkpoints, so every reader reaches the writer's verdict for
// every entry. The rule, with accepted that time and issued the record's
// issued_at:
//
//   - issued is at most [MaxClockSkew] (5 minutes) after accepted and at
//     most [MaxRecordAge] (24 hours) before it, else rule issued-at-range;
//   - the signer holds the authority at issued and at accepted: every
//     delegation on its chain is valid and unrevoked at both, and the root
//     in force is unexpired at both (a root act by the root threshold, a
//     rotation, the root of the chain); an act of the root threshold
//     needs, at its issued_at, the threshold of the root in force then
//     (the last issued by then), so keys that became root keys only later
//     cannot date an act back into an earlier root's time, and a rotation
//     is not dated before the root it replaces;
//   - a root accepted at or after its own expiry trusts nothing, and is
//     refused.
//
// So a key whose window has ended cannot act by writing an earlier
// issued_at, and a key whose window has not begun cannot act by writing a
// later one. Revocation is judged by ledger position: a revoked key or
// delegation holds nothing in any entry after the revocation.
//
// # Quarantine
//
// The latest quarantine act for a machine is in force. An act issued
// before the one in force is refused (rule superseded-record), so a lift
// signed before a quarantine cannot end it; an act of the root threshold
// is replaced or lifted only by another act of the root threshold.
//
// # Authority
//
// [State.Authorize] is the one resolver: given a key, an action, a scope
// and an instant, it answers with the grant and its chain back to the
// root (Grant.Chain), or the first failing rule: root-expired (at
// expires == now the root already is), revoked, no-delegation,
// out-of-scope, outside-window. Every link of a chain must be valid at
// the instant judged: its window covers it and neither it nor its key is
// revoked.
//
// # Patterns
//
// Patterns use [schemas.Match]: '*' matches any run of characters except
// '/'; every other character matches itself. A child pattern is within a
// parent pattern when the parent matches the child's text, each '*' of the
// child standing for itself: sound (a parent '*' absorbs any '/'-free
// expansion) and conservative.
package delegation
