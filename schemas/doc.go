// Package schemas owns writ's record formats: the Go types of every record
// kind, their CDDL schema (RFC 8610, in writ.cddl), the field rules each
// record must satisfy, and the one strict CBOR codec (RFC 8949) every
// record passes through.
//
// # Encoding
//
// Every record is a CBOR map with text keys, encoded with Core Deterministic
// Encoding (RFC 8949 §4.2.1): shortest-form integers and lengths, definite
// lengths only, map keys sorted bytewise. Optional fields are absent rather
// than empty. Every record carries "v", its schema version (currently 1),
// and "issued_at" (or "time" for decisions), a Unix time in seconds.
//
// # Decoding, and where writ is stricter than RFC 8949
//
// [Unmarshal] refuses, with an error wrapping [ErrMalformed]:
//   - input over [MaxRecordSize] bytes, before any parsing;
//   - duplicate map keys, indefinite-length items, any CBOR tag, invalid
//     UTF-8 in text strings, trailing bytes after the item;
//   - a map key that is not a field of the record's schema version, and a
//     key that differs from a field name only by case;
//   - nesting deeper than [MaxNestingDepth], arrays longer than
//     [MaxArrayElements], maps with more than [MaxMapPairs] pairs;
//   - any encoding that does not re-encode to the same bytes (for example
//     a non-shortest integer, unsorted keys, or an optional field present
//     with its empty value), wrapping [ErrNonCanonical] as well.
//
// A record that decodes but breaks a field rule (for example a digest that
// is not "sha256:" and 64 lowercase hex digits) is refused with a
// [*FieldError] that wraps [ErrInvalid] and names the record kind, the
// field and the rule.
//
// This package does no cryptography and no I/O; package sign wraps records
// in COSE envelopes.
package schemas
