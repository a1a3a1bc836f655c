package sign

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/veraison/go-cose"
	"github.com/writ-ledger/writ/schemas"
)

// MaxForeignEnvelope is the largest envelope VerifyForeign reads, in
// bytes. Envelopes made elsewhere are not bound by writ's 65,535-byte
// entry limit, but a verifier still bounds what it holds in memory.
const MaxForeignEnvelope = 1 << 20

// ForeignInfo describes an envelope VerifyForeign accepted.
type ForeignInfo struct {
	Form        string         // "COSE_Sign1" or "COSE_Sign"
	Alg         cose.Algorithm // the alg of the signature that verified
	KeyID       string         // writ key id of the key that verified
	Payload     []byte         // the payload, as received
	ContentType string         // protected content type, if a text string
	// Kind is the writ record kind the content type names, set only when
	// the payload decodes strictly as a record of that kind
	// (schemas.Decode); DeclaredKind is the kind named, and RecordErr why
	// the payload is not such a record (nil when it is, or when the
	// content type names no writ kind).
	Kind         schemas.Kind
	DeclaredKind schemas.Kind
	RecordErr    error
}

// VerifyForeign checks a tagged COSE_Sign1 (RFC 9052 §4.2) or COSE_Sign
// (§4.1), including one writ did not make, against one Ed25519 key. It
// applies the RFC's rules, not writ's record conventions: any header
// labels may appear and kid is not interpreted. It still refuses input
// over MaxForeignEnvelope bytes, duplicate map keys, indefinite lengths,
// trailing bytes, detached payloads and a crit header it cannot honour
// (ErrMalformedEnvelope); an alg other than EdDSA (-8) or Ed25519 (-19) in
// the signature's protected header (ErrAlgorithm); and a signature that
// does not verify over the protected bytes received (ErrBadSignature). A
// COSE_Sign is valid when at least one of its signatures verifies under
// key. A verified envelope whose content type names a writ record kind
// is reported as that kind only when its payload decodes strictly as one
// (ForeignInfo.Kind); otherwise ForeignInfo.RecordErr says why not: the
// signature verifies over a payload that is not a writ record.
func VerifyForeign(data []byte, key PublicKey) (*ForeignInfo, error) {
	if len(data) > MaxForeignEnvelope {
		return nil, malformed("envelope is larger than %d bytes", MaxForeignEnvelope)
	}
	if err := schemas.CheckWellFormed(data); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedEnvelope, err)
	}
	switch {
	case len(data) > 0 && data[0] == 0xd2:
		m := new(cose.Sign1Message)
		if err := m.UnmarshalCBOR(data); err != nil {
			return nil, malformed("COSE_Sign1: %v", err)
		}
		if err := checkForeignHeaders(m.Headers); err != nil {
			return nil, err
		}
		if m.Payload == nil {
			return nil, malformed("detached payloads are not supported")
		}
		alg, err := foreignAlg(m.Headers)
		if err != nil {
			return nil, err
		}
		v, _ := newCoseVerifier(key, alg)
		if err := m.Verify(nil, v); err != nil {
			return nil, fmt.Errorf("%w: COSE_Sign1 under key %s", ErrBadSignature, key.ID())
		}
		return foreignInfo("COSE_Sign1", alg, key, m.Payload, m.Headers), nil
	case len(data) > 1 && data[0] == 0xd8 && data[1] == 0x62:
		m := new(cose.SignMessage)
		if err := m.UnmarshalCBOR(data); err != nil {
			return nil, malformed("COSE_Sign: %v", err)
		}
		if err := checkForeignHeaders(m.Headers); err != nil {
			return nil, err
		}
		if m.Payload == nil {
			return nil, malformed("detached payloads are not supported")
		}
		// Each signature tried costs a hash of the whole payload: bound the
		// count so a 1 MiB envelope cannot demand gigabytes of hashing.
		if len(m.Signatures) > MaxSignatures {
			return nil, malformed("%d signatures, this verifier tries at most %d", len(m.Signatures), MaxSignatures)
		}
		var firstErr error
		for i, s := range m.Signatures {
			if err := checkForeignHeaders(s.Headers); err != nil {
				// Another signer's critical parameters do not concern a
				// signature by this key.
				firstErr = cmpErr(firstErr, fmt.Errorf("signature %d: %w", i, err))
				continue
			}
			if len(s.Signature) != 64 {
				firstErr = cmpErr(firstErr, fmt.Errorf("%w: signature %d is %d bytes, Ed25519 signatures are 64", ErrBadSignature, i, len(s.Signature)))
				continue
			}
			alg, err := foreignAlg(s.Headers)
			if err != nil {
				firstErr = cmpErr(firstErr, fmt.Errorf("signature %d: %w", i, err))
				continue
			}
			v, _ := newCoseVerifier(key, alg)
			if err := s.Verify(v, m.Headers.RawProtected, m.Payload, nil); err != nil {
				firstErr = cmpErr(firstErr, fmt.Errorf("%w: COSE_Sign signature %d under key %s", ErrBadSignature, i, key.ID()))
				continue
			}
			return foreignInfo("COSE_Sign", alg, key, m.Payload, m.Headers), nil
		}
		if firstErr == nil {
			firstErr = malformed("COSE_Sign carries no signature")
		}
		return nil, firstErr
	}
	return nil, malformed("not a tagged COSE_Sign1 (tag 18) or COSE_Sign (tag 98)")
}

// cmpErr keeps the first error, preferring a bad signature (the key was
// tried) over an algorithm mismatch.
func cmpErr(first, next error) error {
	if first == nil || (!errors.Is(first, ErrBadSignature) && errors.Is(next, ErrBadSignature)) {
		return next
	}
	return first
}

func checkForeignHeaders(h cose.Headers) error {
	if _, ok := h.Protected[cose.HeaderLabelCritical]; ok {
		return malformed("protected header lists critical parameters (crit), which this verifier does not process")
	}
	return nil
}

func foreignAlg(h cose.Headers) (cose.Algorithm, error) {
	alg, err := h.Protected.Algorithm()
	if err != nil {
		return 0, fmt.Errorf("%w: protected header alg: %w", ErrAlgorithm, err)
	}
	if alg != AlgEdDSA && alg != AlgEd25519 {
		return 0, fmt.Errorf("%w: alg %v; this verifier checks Ed25519 (EdDSA -8, Ed25519 -19) only", ErrAlgorithm, alg)
	}
	return alg, nil
}

func foreignInfo(form string, alg cose.Algorithm, key PublicKey, payload []byte, h cose.Headers) *ForeignInfo {
	info := &ForeignInfo{Form: form, Alg: alg, KeyID: key.ID(), Payload: bytes.Clone(payload)}
	if ct, ok := h.Protected[cose.HeaderLabelContentType].(string); ok {
		info.ContentType = ct
		if k, ok := schemas.KindFromContentType(ct); ok {
			info.DeclaredKind = k
			if _, err := schemas.Decode(k, payload); err != nil {
				info.RecordErr = err
			} else {
				info.Kind = k
			}
		}
	}
	return info
}

// ForeignResult is what VerifyForeign found, as `writ verify` prints it
// under --json.
type ForeignResult struct {
	Valid        bool   `json:"valid" doc:"whether the signature verifies and the payload is what it declares"`
	Form         string `json:"form" doc:"the envelope: COSE_Sign1, COSE_Sign or DSSE"`
	KeyID        string `json:"key_id" doc:"the key id (64 hex) of the key that verified"`
	Alg          int64  `json:"alg" doc:"the COSE algorithm number of the signature that verified"`
	PayloadBytes int    `json:"payload_bytes" doc:"the payload's size in bytes"`
	ContentType  string `json:"content_type" doc:"the protected content type"`
	Kind         string `json:"kind" doc:"the writ record kind, or \"\""`
}

// ForeignRecordResult is the result for a signature that verifies over
// a payload that is not the record its content type declares
// (ForeignInfo.RecordErr set).
type ForeignRecordResult struct {
	ForeignResult
	SignatureValid bool   `json:"signature_valid" doc:"true: the signature verifies"`
	RecordValid    bool   `json:"record_valid" doc:"false: the payload is not its record"`
	DeclaredKind   string `json:"declared_kind" doc:"the record kind the content type names"`
	Error          string `json:"error" doc:"why the payload is not that record"`
}

// ForeignFailure is the result for a signature that does not verify.
type ForeignFailure struct {
	Valid bool   `json:"valid" doc:"false"`
	Error string `json:"error" doc:"why the signature does not verify"`
}

// Result returns i as its ForeignResult: Valid when the payload is what
// its content type declares (RecordErr nil), Kind the writ kind it
// decoded as ("" for none).
func (i *ForeignInfo) Result() ForeignResult {
	return ForeignResult{i.RecordErr == nil, i.Form, i.KeyID, int64(i.Alg), len(i.Payload), i.ContentType, string(i.Kind)}
}

// RecordResult returns i, whose RecordErr is set, as a
// ForeignRecordResult.
func (i *ForeignInfo) RecordResult() ForeignRecordResult {
	return ForeignRecordResult{i.Result(), true, false, string(i.DeclaredKind), i.RecordErr.Error()}
}
