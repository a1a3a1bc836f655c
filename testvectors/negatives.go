package testvectors

import (
	"bytes"
	"encoding/hex"
	"errors"
	"filippo.io/edwards25519"
	"slices"

	"github.com/fxamacker/cbor/v2"
	"github.com/veraison/go-cose"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// negatives builds the refusal vectors. Payload defects are signed
// correctly, so the defect is the only reason to refuse.
func negatives(k1, k2, k3, k4 *sign.PrivateKey, instr []byte) []Vector {
	out := envelopeNegatives(k3, k4, instr)
	out = append(out, rootNegatives(k1, k2, k3)...)
	return append(out, limitNegatives(k2, k4, instr)...)
}

// order8 is a point of small order (8) in its canonical encoding.
var order8 = []byte{0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f,
	0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a}

// also is v with more acceptable error classes.
func also(v Vector, classes ...string) Vector { v.AlsoAcceptable = classes; return v }

// envelopeNegatives are instructions a verifier refuses for their encoding, envelope or signature.
func envelopeNegatives(k3, k4 *sign.PrivateKey, instr []byte) []Vector {
	inst, ik := schemas.KindInstruction, string(schemas.KindInstruction)
	stranger := key(9)
	signed := func(payload []byte) []byte { return seal(inst, payload, k4) }
	good := signed(instr)
	enc := func(r schemas.Record) []byte { return must(schemas.Encode(r)) }
	hdr := func(alg int64, k *sign.PrivateKey) []byte {
		return header(map[int64]any{1: alg, 3: inst.ContentType(), 4: k.Public().IDBytes()})
	}

	// Protected header {1: -8, 1: -8, 3: ct, 4: kid}: a duplicate label.
	dupHeader := append([]byte{0xa4}, bytes.Clone(hdr(-8, k4)[1:3])...)
	dupHeader = append(dupHeader, hdr(-8, k4)[1:]...)
	sanity(bytes.Count(dupHeader, []byte{0x01, 0x27}) == 2, "duplicate alg label")
	// The same header with its labels out of order: {4: kid, 1: -8, 3: ct}.
	reordered := append([]byte{0xa3, 0x04, 0x58, 0x20}, k4.Public().IDBytes()...)
	reordered = append(reordered, 0x01, 0x27, 0x03)
	reordered = append(reordered, must(canon.Marshal(inst.ContentType()))...)
	// Indefinite-length outer array: 0x84 (array of 4) → 0x9f ... 0xff.
	indefEnv := append(append([]byte{0xd2, 0x9f}, good[2:]...), 0xff)
	// An indefinite-length map as the payload.
	indefPayload := append([]byte{0xbf}, append(bytes.Clone(instr[1:]), 0xff)...)
	sanity(instr[0] == 0xaa, "instruction map has 10 members")
	// A non-shortest integer: "v": 1 written as 0x18 0x01.
	nonShortest := bytes.Replace(instr, []byte{0x61, 'v', 0x01}, []byte{0x61, 'v', 0x18, 0x01}, 1)
	// A duplicate key in the payload: a map of 11 that repeats "v": 1.
	dupPayload := append([]byte{0xab, 0x61, 'v', 0x01}, instr[1:]...)
	// The signature's last byte flipped, and the payload changed after signing.
	badSig := bytes.Clone(good)
	badSig[len(badSig)-1] ^= 1
	changed := bytes.Replace(good, []byte("deploy/web"), []byte("deploy/db!"), 1)
	return []Vector{
		invalid("payload-duplicate-key", "the payload map repeats the key \"v\"", ik, ClassDuplicateKey, signed(dupPayload), true, 1, k4),
		invalid("header-duplicate-key", "the protected header repeats label 1 (alg); the signature covers those bytes", ik, ClassDuplicateKey,
			sign1(dupHeader, []byte{0xa0}, instr, k4), true, 1, k4),
		invalid("payload-indefinite-length", "the payload is an indefinite-length map", ik, ClassIndefinite, signed(indefPayload), true, 1, k4),
		invalid("envelope-indefinite-length", "the COSE_Sign1 array has indefinite length", ik, ClassIndefinite, indefEnv, true, 1, k4),
		invalid("envelope-trailing-bytes", "one byte after the envelope", ik, ClassTrailingData, append(bytes.Clone(good), 0x00), true, 1, k4),
		invalid("record-trailing-bytes", "one byte after a bare record", ik, ClassTrailingData, append(bytes.Clone(instr), 0x00), false, 0),
		invalid("payload-unknown-field", "a field schema version 1 does not define", ik, ClassUnknownField, signed(withField("priority", 1)), true, 1, k4),
		invalid("payload-field-name-case", "\"ID\" is not \"id\"", ik, ClassUnknownField, signed(renamed()), true, 1, k4),
		invalid("payload-unknown-version", "schema version 2", ik, ClassUnknownVersion, signed(withField("v", 2)), true, 1, k4),
		invalid("payload-non-shortest-integer", "\"v\": 1 encoded in two bytes", ik, ClassNonCanonical, signed(nonShortest), true, 1, k4),
		invalid("payload-empty-optional", "an optional field present with its empty value", ik, ClassNonCanonical, signed(withField("brief", "")), true, 1, k4),
		invalid("header-unsorted", "protected header labels not in deterministic order", ik, ClassNonCanonical, sign1(reordered, []byte{0xa0}, instr, k4), true, 1, k4),
		invalid("payload-tag", "a CBOR tag (1, epoch time) where an integer belongs", ik, ClassTag, signed(taggedExpires()), true, 1, k4),
		invalid("payload-invalid-utf8", "a text string that is not UTF-8", ik, ClassInvalidUTF8,
			signed(bytes.Replace(instr, []byte("runner-7"), []byte("runner\xff7"), 1)), true, 1, k4),
		invalid("payload-wrong-type", "an integer where a text string belongs", ik, ClassWrongType, signed(withField("stream", 7)), true, 1, k4),
		invalid("wrong-record-kind", "a pin, correctly signed, offered where an instruction is expected", ik, ClassWrongKind,
			seal(schemas.KindPin, enc(samplePin()), k4), true, 1, k4),
		invalid("kind-in-payload-only", "an instruction payload signed as a pin", ik, ClassWrongKind, seal(schemas.KindPin, instr, k4), true, 1, k4),
		invalid("alg-es256", "alg -7 (ES256) over an Ed25519 signature", ik, ClassAlgorithm, sign1(hdr(-7, k4), []byte{0xa0}, instr, k4), true, 1, k4),
		invalid("alg-missing", "no alg in the protected header", ik, ClassAlgorithm,
			sign1(header(map[int64]any{3: inst.ContentType(), 4: k4.Public().IDBytes()}), []byte{0xa0}, instr, k4), true, 1, k4),
		invalid("kid-not-matching-key", "kid names key 0x03.., the signature is by 0x04..; both trusted", ik, ClassBadSignature,
			sign1(hdr(-8, k3), []byte{0xa0}, instr, k4), true, 1, k3, k4),
		invalid("kid-unknown", "signed by a key the verifier does not trust", ik, ClassUnknownKey, seal(inst, instr, stranger), true, 1, k4),
		invalid("signature-changed", "the signature's last byte flipped", ik, ClassBadSignature, badSig, true, 1, k4),
		invalid("payload-changed", "the payload changed after signing", ik, ClassBadSignature, changed, true, 1, k4),
		invalid("unprotected-header", "a kid in the unprotected header, which writ refuses", ik, ClassMalformedEnvelope,
			sign1(hdr(-8, k4), header(map[int64]any{4: k4.Public().IDBytes()}), instr, k4), true, 1, k4),
		invalid("untagged", "a COSE_Sign1 without tag 18", ik, ClassMalformedEnvelope, good[1:], true, 1, k4),
	}
}

// rootNegatives are roots a verifier refuses: thresholds not met, keys listed twice, small-order or torsion keys.
func rootNegatives(k1, k2, k3 *sign.PrivateKey) []Vector {
	// A COSE_Sign of a 2-of-3 root whose second signature entry repeats
	// the first (same key id, same bytes); and one whose second entry is
	// k2's key id carrying k1's signature bytes.
	root23 := must(schemas.Encode(sampleRoot(2, k1, k2, k3)))
	twice := func(sameKid bool) []byte {
		m := new(cose.SignMessage)
		if err := m.UnmarshalCBOR(seal(schemas.KindRoot, root23, k1, k2)); err != nil {
			panic(err)
		}
		if sameKid {
			m.Signatures[1] = m.Signatures[0]
		} else {
			m.Signatures[1].Signature = bytes.Clone(m.Signatures[0].Signature)
		}
		return must(m.MarshalCBOR())
	}
	dupKeysRoot := sampleRoot(1, k1)
	dupKeysRoot.Keys = [][]byte{k1.Public().Raw(), k1.Public().Raw()}
	dupKeysRoot.Threshold = 2
	th0 := sampleRoot(1, k1)
	th0.Threshold = 0
	th2 := sampleRoot(1, k1)
	th2.Threshold = 2
	smallRoot := sampleRoot(1, k1)
	smallRoot.Keys = [][]byte{k1.Public().Raw(), order8}
	if bytes.Compare(smallRoot.Keys[0], smallRoot.Keys[1]) > 0 {
		smallRoot.Keys[0], smallRoot.Keys[1] = smallRoot.Keys[1], smallRoot.Keys[0]
	}
	// The root's own key plus a point of order 8: a canonical point, not
	// of small order, with a torsion component, whose secret is k1's.
	p1, _ := new(edwards25519.Point).SetBytes(k1.Public().Raw())
	t8, _ := new(edwards25519.Point).SetBytes(order8)
	twinRoot := sampleRoot(1, k1)
	twinRoot.Keys = [][]byte{k1.Public().Raw(), new(edwards25519.Point).Add(p1, t8).Bytes()}
	slices.SortFunc(twinRoot.Keys, bytes.Compare)
	twinRoot.Threshold = 2
	return []Vector{
		also(invalid("threshold-same-key-twice", "a 2-of-3 root whose two signature entries are the same key and bytes", string(schemas.KindRoot),
			ClassDuplicateSigner, twice(true), true, 2, k1, k2, k3), ClassThreshold),
		invalid("threshold-signature-repeated", "a 2-of-3 root whose second key id carries the first key's signature", string(schemas.KindRoot),
			ClassBadSignature, twice(false), true, 2, k1, k2, k3),
		invalid("threshold-not-met", "a 2-of-3 root signed by one key", string(schemas.KindRoot), ClassThreshold,
			seal(schemas.KindRoot, root23, k1), true, 2, k1, k2, k3),
		invalid("root-key-listed-twice", "a root listing one key twice to reach threshold 2", string(schemas.KindRoot), ClassInvalidField,
			seal(schemas.KindRoot, must(schemas.Marshal(dupKeysRoot)), k1), true, 1, k1),
		invalid("root-threshold-0", "threshold 0", string(schemas.KindRoot), ClassInvalidField, seal(schemas.KindRoot, must(schemas.Marshal(th0)), k1), true, 1, k1),
		invalid("root-threshold-above-n", "threshold 2 over one key", string(schemas.KindRoot), ClassInvalidField,
			seal(schemas.KindRoot, must(schemas.Marshal(th2)), k1), true, 1, k1),
		invalid("root-key-small-order", "a root listing a point of order 8", string(schemas.KindRoot), ClassInvalidKey,
			seal(schemas.KindRoot, must(schemas.Marshal(smallRoot)), k1), true, 1, k1),
		invalid("root-key-torsion", "a 2-of-2 root listing k and k + T (T of order 8): one secret as two keys", string(schemas.KindRoot), ClassInvalidKey,
			seal(schemas.KindRoot, must(schemas.Marshal(twinRoot)), k1), true, 1, k1),
		invalid("root-key-wrong-length", "a root listing a 31-byte key: the root schema requires 32 bytes", string(schemas.KindRoot), ClassInvalidField,
			seal(schemas.KindRoot, must(canon.Marshal(map[string]any{"v": 1, "version": 1, "keys": [][]byte{k1.Public().Raw()[:31]},
				"threshold": 1, "issued_at": t0, "expires": t0 + day})), k1), true, 1, k1),
	}
}

// limitNegatives are inputs refused for a trusted key or a size over a limit.
func limitNegatives(k2, k4 *sign.PrivateKey, instr []byte) []Vector {
	inst, ik := schemas.KindInstruction, string(schemas.KindInstruction)
	good := seal(inst, instr, k4)
	orderTrust := Vector{Name: "trusted-key-small-order", Comment: "a verifier's trusted key that is a point of order 8",
		Kind: ik, Signed: true, TrustedKeys: []string{hexOf(order8)}, Threshold: 1, Input: hexOf(good), Expect: "invalid", Error: ClassInvalidKey,
		AlsoAcceptable: []string{ClassUnknownKey}}
	shortTrust := Vector{Name: "trusted-key-wrong-length", Comment: "a trusted key of 31 bytes",
		Kind: ik, Signed: true, TrustedKeys: []string{hexOf(k4.Public().Raw()[:31])}, Threshold: 1, Input: hexOf(good), Expect: "invalid", Error: ClassInvalidKey,
		AlsoAcceptable: []string{ClassUnknownKey}}
	hostileArray := []byte{0x9b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0}
	hostileBytes := []byte{0x5b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0}
	hostileEnvelope := []byte{0xd2, 0x9b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0}

	return []Vector{
		orderTrust,
		shortTrust,
		also(invalid("declared-length-array", "16 bytes declaring an array of 2^63-1 elements (refused before allocating; also truncated)",
			ik, ClassLimit, hostileArray, false, 0), ClassNotWellFormed, ClassWrongType),
		also(invalid("declared-length-bytes", "16 bytes declaring a byte string of 2^63-1 bytes (refused before allocating)",
			ik, ClassNotWellFormed, hostileBytes, false, 0), ClassWrongType),
		also(invalid("declared-length-envelope", "a tag-18 envelope declaring an array of 2^63-1 elements (also truncated)",
			ik, ClassLimit, hostileEnvelope, true, 1, k4), ClassNotWellFormed, ClassMalformedEnvelope),
		invalid("too-large", "a canonical instruction of 65,536 bytes, one over the entry limit, refused before decoding (its brief is over the brief limit too: no valid record is that large)", ik, ClassTooLarge,
			oversized(), false, 0),
		invalid("brief-over-limit", "an instruction whose brief is one byte over 32 KiB (schemas.MaxBrief)", ik, ClassInvalidField,
			must(canon.Marshal(withBrief(schemas.MaxBrief+1))), false, 0),
		invalid("pin-version-over-limit", "a pin whose version is a valid semantic version of 129 bytes (schemas.MaxVersion is 128)", string(schemas.KindPin), ClassInvalidField,
			seal(schemas.KindPin, must(canon.Marshal(longVersionPin())), k2), true, 1, k2),
	}
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }

// renamed has both "id" and "ID": the only defect is the unknown "ID".
func renamed() []byte {
	m := instructionMap()
	m["ID"] = m["id"]
	return must(canon.Marshal(m))
}

// oversized is a canonical instruction whose brief makes it exactly one
// byte longer than schemas.MaxRecordSize. Its brief is over
// schemas.MaxBrief too, and must be: the limits table keeps every valid
// record within MaxRecordSize.
func oversized() []byte {
	in := sampleInstruction()
	in.Brief = ""
	base := len(must(schemas.Marshal(in)))
	for n := schemas.MaxRecordSize - base - 32; ; n++ {
		in.Brief = string(bytes.Repeat([]byte{'x'}, n))
		b, err := canon.Marshal(in)
		if err != nil {
			panic(err)
		}
		if len(b) == schemas.MaxRecordSize+1 {
			var fe *schemas.FieldError
			sanity(errors.As(in.Validate(), &fe) && fe.Field == "brief", "the oversized instruction breaks only the brief limit")
			return b
		}
		sanity(len(b) <= schemas.MaxRecordSize+1, "oversized: no brief length gives exactly the limit plus one")
	}
}

// taggedExpires is the instruction with "expires" wrapped in tag 1.
func taggedExpires() []byte {
	m := instructionMap()
	m["expires"] = cbor.Tag{Number: 1, Content: t0 + hour}
	return must(canon.Marshal(m))
}

// withBrief is the sample instruction with a brief of n bytes.
func withBrief(n int) *schemas.Instruction {
	in := sampleInstruction()
	in.Brief = string(bytes.Repeat([]byte{'x'}, n))
	return in
}

// longVersionPin is the sample pin with a version one byte over
// schemas.MaxVersion: "v1.0.0-" and a pre-release of dotted parts.
func longVersionPin() *schemas.Pin {
	p := samplePin()
	v := "v1.0.0-"
	for len(v) < schemas.MaxVersion+1 {
		v += "a"
	}
	p.Version = v
	return p
}
