package schemas

import (
	"errors"
	"fmt"
	"strings"
)

// SchemaVersion is the only record schema version this build reads and
// writes. It is the value of every record's "v" field.
const SchemaVersion = 1

// Kind names a record kind. The kind of a signed record travels in the
// COSE protected header as a content type (see [Kind.ContentType]), so it
// is covered by the signature: a record signed as one kind never verifies
// as another.
type Kind string

// The record kinds of DESIGN.md that this build knows.
const (
	KindRoot        Kind = "root"
	KindDelegation  Kind = "delegation"
	KindPin         Kind = "pin"
	KindInstruction Kind = "instruction"
	KindDecision    Kind = "decision"
	KindRevocation  Kind = "revocation"
	KindIssuer      Kind = "issuer"
	KindQuarantine  Kind = "quarantine"
	KindDowngrade   Kind = "downgrade"
)

// Kinds lists every known kind, in a stable order.
var Kinds = []Kind{KindRoot, KindDelegation, KindPin, KindInstruction, KindDecision, KindRevocation, KindIssuer, KindQuarantine, KindDowngrade}

const contentTypePrefix, contentTypeSuffix = "application/vnd.writ.", "+cbor"

// ContentType returns the media type that marks a payload of this kind in
// a COSE protected header (RFC 9052 §3.1, label 3), for example
// "application/vnd.writ.pin+cbor".
func (k Kind) ContentType() string { return contentTypePrefix + string(k) + contentTypeSuffix }

// KindFromContentType returns the kind whose ContentType is exactly ct. The
// boolean is false for any other string, including other letter case.
func KindFromContentType(ct string) (Kind, bool) {
	if !strings.HasPrefix(ct, contentTypePrefix) || !strings.HasSuffix(ct, contentTypeSuffix) {
		return "", false
	}
	k := Kind(strings.TrimSuffix(strings.TrimPrefix(ct, contentTypePrefix), contentTypeSuffix))
	for _, known := range Kinds {
		if k == known {
			return k, true
		}
	}
	return "", false
}

// Record is implemented by every record type.
type Record interface {
	// Kind returns the record's kind.
	Kind() Kind
	// Validate checks every field rule of the record's kind and returns a
	// *FieldError (wrapping ErrInvalid) for the first rule broken.
	Validate() error
}

// ErrInvalid is wrapped by every *FieldError: the record is well-formed
// CBOR but breaks a field rule of its kind.
var ErrInvalid = errors.New("invalid record")

// FieldError names the record kind, the field (a dotted path such as
// "agent.digest") and the rule a record broke.
type FieldError struct {
	Kind  Kind
	Field string
	Rule  string
}

// Error returns "kind.field: rule".
func (e *FieldError) Error() string {
	return fmt.Sprintf("%s.%s: %s", e.Kind, e.Field, e.Rule)
}

// Unwrap returns ErrInvalid, so errors.Is(err, ErrInvalid) holds.
func (e *FieldError) Unwrap() error { return ErrInvalid }

func fieldErr(k Kind, field, format string, args ...any) error {
	return &FieldError{Kind: k, Field: field, Rule: fmt.Sprintf(format, args...)}
}

// New returns a pointer to a zero record of kind k, or nil for an unknown
// kind.
func New(k Kind) Record {
	switch k {
	case KindRoot:
		return new(Root)
	case KindDelegation:
		return new(Delegation)
	case KindPin:
		return new(Pin)
	case KindInstruction:
		return new(Instruction)
	case KindDecision:
		return new(Decision)
	case KindRevocation:
		return new(Revocation)
	case KindIssuer:
		return new(Issuer)
	case KindQuarantine:
		return new(Quarantine)
	case KindDowngrade:
		return new(Downgrade)
	}
	return nil
}

// Decode strictly decodes data as a record of kind k (see [Unmarshal]) and
// applies its field rules. It returns an error wrapping ErrMalformed for
// bytes that are not a canonical record of that kind and schema version
// (ErrUnknownVersion for another "v"), or a *FieldError wrapping
// ErrInvalid for a broken field rule. On error the record is nil.
func Decode(k Kind, data []byte) (Record, error) {
	r := New(k)
	if r == nil {
		return nil, fmt.Errorf("%w: unknown record kind %q", ErrMalformed, k)
	}
	if len(data) > MaxRecordSize {
		return nil, fmt.Errorf("%w: %w: larger than the %d-byte limit", ErrMalformed, ErrTooLarge, MaxRecordSize)
	}
	// One strict decode; the version is looked at separately only when
	// something is wrong, to report an unknown version as such rather than
	// as unknown fields.
	err := Unmarshal(data, r)
	if err != nil || r.(versioned).version() != SchemaVersion {
		v, perr := peekVersion(data)
		switch {
		case perr != nil:
			return nil, fmt.Errorf("%s record: %w", k, perr)
		case v != SchemaVersion:
			return nil, fmt.Errorf("%s record: %w: %w: v=%d, this build reads v=%d", k, ErrMalformed, ErrUnknownVersion, v, SchemaVersion)
		default:
			return nil, fmt.Errorf("%s record: %w", k, err)
		}
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// versioned is implemented by every record type: its "v" field.
type versioned interface{ version() uint64 }

func (r *Root) version() uint64        { return r.V }
func (r *Delegation) version() uint64  { return r.V }
func (r *Pin) version() uint64         { return r.V }
func (r *Instruction) version() uint64 { return r.V }
func (r *Decision) version() uint64    { return r.V }
func (r *Revocation) version() uint64  { return r.V }
func (r *Issuer) version() uint64      { return r.V }
func (r *Quarantine) version() uint64  { return r.V }
func (r *Downgrade) version() uint64   { return r.V }

// Encode applies r's field rules and returns its deterministic encoding,
// after decoding it back with Decode: writ never writes a record it would
// refuse to read. It returns the *FieldError from Validate, an error
// wrapping ErrTooLarge when the encoding exceeds MaxRecordSize, or the
// error Decode gives the encoding (wrapping ErrMalformed) when it does
// not read back.
func Encode(r Record) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	b, err := Marshal(r)
	if err != nil {
		return nil, err
	}
	if _, err := Decode(r.Kind(), b); err != nil {
		return nil, fmt.Errorf("the %s record would not read back: %w", r.Kind(), err)
	}
	return b, nil
}
