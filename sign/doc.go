// Package sign owns writ's keys and signatures: Ed25519 public keys and
// their key ids, private keys encrypted at rest with age, and the COSE
// envelopes (RFC 9052) that carry every signed record.
//
// # Keys
//
// Keys are Ed25519 (RFC 8032) only. A public key is stored as PEM PKIX
// ("PUBLIC KEY"); its key id is the lowercase hex SHA-256 of the PKIX DER
// encoding (64 hex digits). A public key is checked when loaded: exactly 32
// bytes, the canonical encoding of a point on the curve, not of small
// order, and in the prime-order subgroup (no torsion component, so one
// secret has one acceptable public key; stricter than RFC 8032, which
// leaves this to the verifier). A private key file is an armored age file (filippo.io/age)
// encrypted to a passphrase (scrypt, [ScryptRecipient]) or to age X25519
// recipients ([ParseRecipients], unlocked with an identity file,
// [LoadIdentities]), whose plaintext is the PKCS #8 PEM of the key; it is
// written with mode 0600, and writ refuses to read a key or identity file
// that is readable or writable by group or others. A plain key file
// ([GeneratePlainKeyFiles], [LoadPlainKey]; a runner key kept as a file)
// is that PEM unencrypted, protected by the file system alone: it is
// read only when it belongs to the process's user id and is closed to
// group and others. Signing goes through sigstore's signature.Signer, so
// a KMS or HSM signer can stand in.
//
// # Envelopes
//
// A record signed by one key is a tagged COSE_Sign1 (RFC 9052 §4.2, CBOR
// tag 18):
//
//	18([ protected: bstr .cbor {1: -8, 3: content-type, 4: kid},
//	     unprotected: {},
//	     payload: bstr (the record, deterministic CBOR),
//	     signature: bstr .size 64 ])
//
// Threshold acts use COSE_Sign rather than a set of COSE_Sign1: one
// payload, one protected content type, any number of signatures, each with
// its own protected alg and kid, as RFC 9052 designed it. A threshold counts
// distinct verified public keys, never key ids or signature entries.
//
// A record signed by several keys (a threshold act) is a tagged COSE_Sign
// (RFC 9052 §4.1, tag 98): the body's protected header holds only the
// content type {3: content-type}, and each COSE_Signature's protected
// header holds {1: -8, 4: kid}; signatures are sorted by key id.
// content-type names the record kind ("application/vnd.writ.pin+cbor"), so
// the kind is covered by every signature. kid is the raw 32-byte SHA-256 of
// the signer's PKIX DER.
//
// Where writ is stricter than RFC 9052 when reading ([ParseEnvelope]):
// the whole envelope and each protected header must be canonical CBOR
// (RFC 8949 §4.2.1) within the limits of package schemas; only the
// header labels above may appear, and unprotected headers must be empty;
// alg must be EdDSA (-8) or Ed25519 (-19, RFC 9864); payloads may not be
// detached; a key id may sign a COSE_Sign at most once. Signatures are
// verified over the protected bytes received, never a re-encoding, and the
// algorithm used is the trusted key's (Ed25519), never the message's
// choice.
//
// [VerifyForeign] checks envelopes writ did not make (`writ verify`): RFC
// 9052 structure, strict CBOR well-formedness, alg -8 or -19, one given key,
// without writ's record conventions.
package sign
