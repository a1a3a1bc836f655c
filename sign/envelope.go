package sign

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/fxamacker/cbor/v2"
	"github.com/veraison/go-cose"
	"github.com/writ-ledger/writ/schemas"
)

// Algorithms accepted in a protected header for an Ed25519 key: EdDSA
// (RFC 9053 §2.2) and the fully specified Ed25519 (RFC 9864). writ writes
// AlgEdDSA.
const (
	AlgEdDSA   = cose.AlgorithmEdDSA // -8
	AlgEd25519 = cose.Algorithm(-19)
)

// MaxSignatures is the most signatures a COSE_Sign may carry; it is the
// largest root key set schemas accepts.
const MaxSignatures = 64

// Errors returned by envelope parsing and verification.
var (
	// ErrMalformedEnvelope wraps every structural problem: not a tagged
	// COSE_Sign1 or COSE_Sign, non-canonical CBOR, an unexpected header
	// label, an unknown content type, a bad kid, a repeated signer.
	ErrMalformedEnvelope = errors.New("malformed envelope")
	// ErrAlgorithm: the header's alg is not one writ accepts for Ed25519.
	ErrAlgorithm = errors.New("unsupported algorithm")
	// ErrBadSignature: a signature by a known key does not verify.
	ErrBadSignature = errors.New("signature does not verify")
	// ErrDuplicateSigner is wrapped (with ErrMalformedEnvelope) when one
	// key id, or one key, signs a COSE_Sign more than once.
	ErrDuplicateSigner = errors.New("the same key signs twice")
)

// Envelope is a parsed, not yet verified, signed record. Its fields are
// read from the bytes received; nothing in it is trustworthy until Verify
// succeeds.
type Envelope struct {
	Kind       schemas.Kind // from the protected content type
	Payload    []byte       // the record, as received
	Signatures []SignatureInfo
	Raw        []byte // the whole envelope, as received

	sign1 *cose.Sign1Message
	multi *cose.SignMessage
	// prechecked[i] is the key signature i verified under in Precheck
	// (zero if not checked or not valid).
	prechecked []PublicKey
}

// SignatureInfo describes one signature of an envelope.
type SignatureInfo struct {
	KeyID string         // 64 lowercase hex, from the protected kid
	Alg   cose.Algorithm // AlgEdDSA or AlgEd25519
}

// Digest returns "sha256:<hex>" of the envelope's bytes as received: the
// record digest writ prints and stores.
func (e *Envelope) Digest() string { return schemas.SHA256Digest(e.Raw) }

// Sign wraps payload, a record of kind k, in a tagged COSE_Sign1 when one
// key signs, or a tagged COSE_Sign with one signature per key (sorted by
// key id) when several do. It refuses no keys, more than MaxSignatures
// keys, the same key twice, and a payload over schemas.MaxRecordSize once
// wrapped.
func Sign(k schemas.Kind, payload []byte, keys ...*PrivateKey) ([]byte, error) {
	if len(keys) == 0 {
		return nil, errors.New("signing: no keys")
	}
	if len(keys) > MaxSignatures {
		// ParseEnvelope refuses more: never write what writ cannot read.
		return nil, fmt.Errorf("signing: %d keys, an envelope carries at most %d signatures", len(keys), MaxSignatures)
	}
	keys = slices.Clone(keys)
	slices.SortFunc(keys, func(a, b *PrivateKey) int { return bytes.Compare(a.public.IDBytes(), b.public.IDBytes()) })
	for i := 1; i < len(keys); i++ {
		if keys[i].public.Equal(keys[i-1].public) {
			return nil, fmt.Errorf("signing: key %s given twice", keys[i].public.ID())
		}
	}
	var out []byte
	var err error
	if len(keys) == 1 {
		msg := cose.NewSign1Message()
		msg.Headers.Protected = cose.ProtectedHeader{
			cose.HeaderLabelAlgorithm:   AlgEdDSA,
			cose.HeaderLabelContentType: k.ContentType(),
			cose.HeaderLabelKeyID:       keys[0].public.IDBytes(),
		}
		msg.Payload = payload
		if err = msg.Sign(rand.Reader, nil, coseSigner{keys[0]}); err != nil {
			return nil, err
		}
		out, err = msg.MarshalCBOR()
	} else {
		msg := cose.NewSignMessage()
		msg.Headers.Protected = cose.ProtectedHeader{cose.HeaderLabelContentType: k.ContentType()}
		msg.Payload = payload
		signers := make([]cose.Signer, len(keys))
		for i, key := range keys {
			s := cose.NewSignature()
			s.Headers.Protected = cose.ProtectedHeader{
				cose.HeaderLabelAlgorithm: AlgEdDSA,
				cose.HeaderLabelKeyID:     key.public.IDBytes(),
			}
			msg.Signatures = append(msg.Signatures, s)
			signers[i] = coseSigner{key}
		}
		if err = msg.Sign(rand.Reader, nil, signers...); err != nil {
			return nil, err
		}
		out, err = msg.MarshalCBOR()
	}
	if err != nil {
		return nil, err
	}
	if len(out) > schemas.MaxRecordSize {
		return nil, fmt.Errorf("%w: envelope is %d bytes, limit %d", schemas.ErrTooLarge, len(out), schemas.MaxRecordSize)
	}
	return out, nil
}

// coseSigner adapts a PrivateKey to go-cose's Signer.
type coseSigner struct{ k *PrivateKey }

func (s coseSigner) Algorithm() cose.Algorithm { return AlgEdDSA }
func (s coseSigner) Sign(_ io.Reader, content []byte) ([]byte, error) {
	return s.k.SignMessage(content)
}

// Protected header shapes, decoded strictly: any other label is refused.
// Members are optional here so that a missing one is reported by name.
type sign1Header struct {
	Alg *int64 `cbor:"1,keyasint,omitempty"`
	CT  string `cbor:"3,keyasint,omitempty"`
	KID []byte `cbor:"4,keyasint,omitempty"`
}
type bodyHeader struct {
	CT string `cbor:"3,keyasint,omitempty"`
}
type sigHeader struct {
	Alg *int64 `cbor:"1,keyasint,omitempty"`
	KID []byte `cbor:"4,keyasint,omitempty"`
}

// IsEnvelope reports whether data starts like a tagged COSE_Sign1 (tag 18)
// or COSE_Sign (tag 98). It does not validate anything else.
func IsEnvelope(data []byte) bool {
	return len(data) > 0 && data[0] == 0xd2 || len(data) > 1 && data[0] == 0xd8 && data[1] == 0x62
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedEnvelope, fmt.Sprintf(format, args...))
}

// decodeHeader strictly decodes one protected header (the bstr's content)
// into v, refusing unknown labels and non-canonical encodings.
func decodeHeader(raw []byte, v any) error {
	var inner []byte
	if err := schemas.Unmarshal(raw, &inner); err != nil {
		return err
	}
	return schemas.Unmarshal(inner, v)
}

func checkAlgKid(alg *int64, kid []byte) (SignatureInfo, error) {
	if alg == nil {
		return SignatureInfo{}, fmt.Errorf("%w: %w: the protected header has no alg (label 1)", ErrMalformedEnvelope, ErrAlgorithm)
	}
	a := cose.Algorithm(*alg)
	if a != AlgEdDSA && a != AlgEd25519 {
		return SignatureInfo{}, fmt.Errorf("%w: %w: alg %d (writ accepts -8 EdDSA and -19 Ed25519)", ErrMalformedEnvelope, ErrAlgorithm, *alg)
	}
	if len(kid) != 32 {
		return SignatureInfo{}, malformed("kid is %d bytes, want the 32-byte SHA-256 key id", len(kid))
	}
	return SignatureInfo{KeyID: hex.EncodeToString(kid), Alg: a}, nil
}

var emptyMap = []byte{0xa0}

// The outer shapes of COSE_Sign1 and COSE_Sign (RFC 9052 §4.1, §4.2),
// decoded before go-cose sees the message so that every header is checked
// with writ's strict rules first.
type (
	rawSign1 struct {
		_           struct{} `cbor:",toarray"`
		Protected   cbor.RawMessage
		Unprotected cbor.RawMessage
		Payload     cbor.RawMessage
		Signature   cbor.RawMessage
	}
	rawSign struct {
		_           struct{} `cbor:",toarray"`
		Protected   cbor.RawMessage
		Unprotected cbor.RawMessage
		Payload     cbor.RawMessage
		Signatures  []rawSignature
	}
	rawSignature struct {
		_           struct{} `cbor:",toarray"`
		Protected   cbor.RawMessage
		Unprotected cbor.RawMessage
		Signature   cbor.RawMessage
	}
)

// decodeBstr decodes a canonical byte string (null stays nil).
func decodeBstr(what string, raw []byte) ([]byte, error) {
	var b []byte
	if err := schemas.Unmarshal(raw, &b); err != nil {
		return nil, headerErr(what, err)
	}
	return b, nil
}

// checkSigLength requires the signature to be a byte string of exactly 64
// bytes (RFC 8032 §5.1.6): anything else cannot be an Ed25519 signature,
// and accepting it would let anyone pad an envelope with junk entries.
func checkSigLength(raw []byte) error {
	var sig []byte
	if err := schemas.DecodeStructure(raw, &sig); err != nil {
		return headerErr("signature", err)
	}
	if len(sig) != 64 {
		return malformed("signature is %d bytes, Ed25519 signatures are 64", len(sig))
	}
	return nil
}

func headerErr(where string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrMalformedEnvelope, where, err)
}

// ParseEnvelope checks the structure of a tagged COSE_Sign1 or COSE_Sign
// as described in the package doc, without verifying any signature. It
// returns an error wrapping ErrMalformedEnvelope (with the schemas
// sentinel for a CBOR rule, ErrAlgorithm for a refused alg, or
// ErrDuplicateSigner) and a nil Envelope on any problem.
func ParseEnvelope(data []byte) (*Envelope, error) {
	if len(data) > schemas.MaxRecordSize {
		return nil, fmt.Errorf("%w: %w: larger than the %d-byte limit", ErrMalformedEnvelope, schemas.ErrTooLarge, schemas.MaxRecordSize)
	}
	e := &Envelope{Raw: data}
	var ct string
	var err error
	switch {
	case len(data) > 1 && data[0] == 0xd2 && data[1] == 0x84:
		ct, err = e.parseSign1(data)
	case len(data) > 0 && data[0] == 0xd2:
		// Not the one shape a COSE_Sign1 takes: say precisely why.
		if err := schemas.CheckCanonical(data); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformedEnvelope, err)
		}
		return nil, malformed("COSE_Sign1: the tag must hold an array of 4")
	case len(data) > 1 && data[0] == 0xd8 && data[1] == 0x62:
		ct, err = e.parseSign(data)
	default:
		return nil, malformed("not a tagged COSE_Sign1 (tag 18) or COSE_Sign (tag 98)")
	}
	if err != nil {
		return nil, err
	}
	k, ok := schemas.KindFromContentType(ct)
	if !ok {
		return nil, malformed("content type %q is not a writ record kind", ct)
	}
	if e.Payload == nil {
		return nil, malformed("detached payloads are not accepted")
	}
	e.Kind = k
	return e, nil
}

// parseSign1 reads a COSE_Sign1 (RFC 9052 §4.2) whose tag and array head
// are the shortest into e, returning its content type. This is the hot
// path (every single-signer record): the envelope is canonical exactly
// when its tag and array heads are the shortest (checked by the caller)
// and each of its four parts is: the headers by decodeHeader, the
// payload and signature by decodeBstr.
func (e *Envelope) parseSign1(data []byte) (string, error) {
	var raw rawSign1
	if err := schemas.DecodeStructure(data[1:], &raw); err != nil {
		return "", fmt.Errorf("%w: COSE_Sign1: %w", ErrMalformedEnvelope, err)
	}
	var h sign1Header
	if err := decodeHeader(raw.Protected, &h); err != nil {
		return "", headerErr("protected header", err)
	}
	si, err := checkAlgKid(h.Alg, h.KID)
	if err != nil {
		return "", err
	}
	if !bytes.Equal(raw.Unprotected, emptyMap) {
		return "", malformed("unprotected header must be empty")
	}
	payload, err := decodeBstr("payload", raw.Payload)
	if err != nil {
		return "", err
	}
	sig, err := decodeBstr("signature", raw.Signature)
	if err != nil {
		return "", err
	}
	if len(sig) != 64 {
		return "", malformed("signature is %d bytes, Ed25519 signatures are 64", len(sig))
	}
	e.sign1 = &cose.Sign1Message{
		Headers: cose.Headers{RawProtected: raw.Protected, Protected: cose.ProtectedHeader{cose.HeaderLabelAlgorithm: si.Alg},
			RawUnprotected: raw.Unprotected, Unprotected: cose.UnprotectedHeader{}},
		Payload: payload, Signature: sig,
	}
	e.Payload, e.Signatures = payload, []SignatureInfo{si}
	return h.CT, nil
}

// parseSign reads a canonical COSE_Sign (RFC 9052 §4.1) into e, returning
// its content type: 1 to MaxSignatures signatures, each with an empty
// unprotected header, sorted by key id with no key twice.
func (e *Envelope) parseSign(data []byte) (string, error) {
	if err := schemas.CheckCanonical(data); err != nil {
		return "", fmt.Errorf("%w: %w", ErrMalformedEnvelope, err)
	}
	var raw rawSign
	if err := schemas.DecodeStructure(data[2:], &raw); err != nil {
		return "", malformed("COSE_Sign: %v", err)
	}
	var h bodyHeader
	if err := decodeHeader(raw.Protected, &h); err != nil {
		return "", headerErr("protected header", err)
	}
	if !bytes.Equal(raw.Unprotected, emptyMap) {
		return "", malformed("unprotected header must be empty")
	}
	if len(raw.Signatures) == 0 || len(raw.Signatures) > MaxSignatures {
		return "", malformed("%d signatures, allowed 1 to %d", len(raw.Signatures), MaxSignatures)
	}
	for i, rs := range raw.Signatures {
		si, err := parseSignature(i, rs)
		if err != nil {
			return "", err
		}
		// Sorted by key id, as writ writes them: one set of signers has
		// one encoding, so nobody can reorder entries to mint a new
		// envelope of the same signed content.
		if n := len(e.Signatures); n > 0 {
			switch prev := e.Signatures[n-1].KeyID; {
			case prev == si.KeyID:
				return "", fmt.Errorf("%w: %w: key id %s", ErrMalformedEnvelope, ErrDuplicateSigner, si.KeyID)
			case prev > si.KeyID:
				return "", malformed("signatures must be sorted by key id (%s before %s)", prev, si.KeyID)
			}
		}
		e.Signatures = append(e.Signatures, si)
	}
	m := new(cose.SignMessage)
	if err := m.UnmarshalCBOR(data); err != nil {
		return "", malformed("COSE_Sign: %v", err)
	}
	e.Payload, e.multi = m.Payload, m
	return h.CT, nil
}

// parseSignature checks COSE_Sign's signature i: its protected header
// (alg and kid), an empty unprotected header, and its length.
func parseSignature(i int, rs rawSignature) (SignatureInfo, error) {
	var sh sigHeader
	if err := decodeHeader(rs.Protected, &sh); err != nil {
		return SignatureInfo{}, headerErr(fmt.Sprintf("signature %d protected header", i), err)
	}
	if !bytes.Equal(rs.Unprotected, emptyMap) {
		return SignatureInfo{}, malformed("signature %d: unprotected header must be empty", i)
	}
	si, err := checkAlgKid(sh.Alg, sh.KID)
	if err != nil {
		return SignatureInfo{}, fmt.Errorf("signature %d: %w", i, err)
	}
	if err := checkSigLength(rs.Signature); err != nil {
		return SignatureInfo{}, fmt.Errorf("signature %d: %w", i, err)
	}
	return si, nil
}
