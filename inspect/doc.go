// Package inspect reads any file writ writes and says what it is, field
// by field, the way `openssl x509 -text` or age's inspect does: a signed
// record (its kind, signers by key id, every field by name, its validity
// window in UTC and local time), an unsigned instruction, a receipt
// (RFC 9942), a signed checkpoint (c2sp.org/tlog-checkpoint) with its
// signature and cosignature lines, the header of a ledger export, a
// public key, a log verifier key, or a private key file (named, never
// read).
//
// Nothing inspect returns is verified: it parses with writ's strict,
// bounded parsers and reports what the bytes state. [Describe] says so in
// every result (Description.Verified is always false), and names the
// command that verifies each format. [Authority] adds, from a ledger's
// verified authority state, the delegation each signer acts under.
//
// It is the library behind `writ inspect FILE` and `writ ledger entry
// --inspect`.
package inspect
