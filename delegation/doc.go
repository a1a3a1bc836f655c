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
// whose signatures verify under keys the state already trusts and whose
// signer is authorized for it at the record's issued_at:
//
//   - a delegation must be signed by at least the root's threshold of
//     distinct root keys (counted by public key, never by key id or
//     signature entry), while the root is unexpired;
//   - a pin must be signed by a key holding a delegation with action "pin"
//     whose artifact patterns match the pin's artifact;
//   - an instruction must be signed by a key holding a delegation with
//     action "instruct" whose stream and machine patterns match.
//
// A record that fails any check is refused with an error and never enters
// the state, so later records cannot lean on it.
//
// # Windows and patterns
//
// A delegation is valid at T when not_before <= T < not_after, and only
// while the root is unexpired (T < root.expires: at expires == T the root
// is already expired). Patterns use [schemas.Match]: '*' matches any run
// of characters except '/'; every other character matches itself.
//
// # Not yet
//
// This version accepts delegations issued by the root threshold only
// (re-delegation by a delegate is refused), and one root per ledger (no
// rotation). Revocation, issuer and quarantine records have schemas but are
// refused by Apply (RuleNotSupportedYet) rather than stored and ignored.
// LIMITATIONS.md tracks each.
package delegation
