// Package keys holds the keys a ledger directory keeps beside its logs,
// and how they are kept: the checkpoint key that signs the authority log
// (DIR/checkpoint.*) and the runner key that signs a runner's decision
// log (DIR/runner.*).
//
// A key lives in a file (DIR/NAME.key: an age-encrypted key file, or for
// the runner key kept as [ProtectFile] an unencrypted PKCS #8 PEM file of
// mode 0600) or in a PKCS#11 token: the directory then holds a token key
// reference, DIR/NAME.uri (the key's RFC 7512 URI and a newline, never a
// PIN nor a module path: [ReadRef], [WriteRef]), and DIR/NAME.pub, its
// public key, which the token's key must match ([LoadToken]).
//
// The runner key's protection ([Protection]) is chosen at the runner's
// first admission and stated in DIR/runner.protection ([StatementFile]);
// [RunnerProtection] reads it, [NewRunner] and [LoadRunner] make and
// unlock the key as it says, and [Resolve] decides, from what an operator
// asked, how the key will be made or unlocked, refusing with a sentinel
// a caller maps to its flags: [ErrProtectionName], [ErrNotTokenURI], [ErrTokenKeyProtection],
// [ErrTokenKeyExists], [ErrNoTokenKey], [ErrProtectionFixed],
// [ErrSecretUnused].
//
// Package ledger opens the logs with these keys (ledgerdir.OpenDecisions,
// ledgerdir.OpenAuthorityWith, ledgerdir.InitWithKey); this package imports no
// log.
package keys
