package schemas

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/fxamacker/cbor/v2"
)

// Limits applied by [Unmarshal] before and while decoding. Each one is far
// above what an honest record needs and low enough that a hostile input
// cannot make the decoder allocate or recurse without bound.
const (
	// MaxRecordSize is the largest encoded record, in bytes. Ledger entries
	// are served as C2SP tlog-tiles whose entry bundles carry a 16-bit
	// length, so no record or envelope may exceed 65,535 bytes.
	MaxRecordSize = 65535

	// MaxProvision is the most files one instruction may provision, so
	// that the decision recording their digests stays within
	// MaxRecordSize (64 SHA-512 digest pairs are about 28 KiB).
	MaxProvision = 64

	// MaxClaimSeconds is the longest an instruction's work claim may
	// last, in seconds after its issued_at (30 days): a claim blocks the
	// stream for every other session, so it cannot be open-ended.
	MaxClaimSeconds = 30 * 24 * 3600

	// MaxNestingDepth is the deepest nesting of arrays and maps accepted.
	// The deepest honest record (instruction → provision list → item) is 3
	// levels; an envelope wrapping it adds 2 more.
	MaxNestingDepth = 8

	// MaxArrayElements is the longest array accepted. The longest honest
	// array is a root's key list or a delegation's pattern list, both far
	// shorter; the bound stops a declared length of 2^63 from being trusted.
	MaxArrayElements = 1024

	// MaxMapPairs is the largest map accepted. The largest record has 13
	// fields.
	MaxMapPairs = 64
)

// Errors returned by the codec. Callers branch on them with errors.Is.
var (
	// ErrMalformed is wrapped by every error for bytes that are not a
	// well-formed, canonical record of the expected kind and version.
	ErrMalformed = errors.New("malformed record")

	// ErrNonCanonical is wrapped (with ErrMalformed) when the input decodes
	// but is not the Core Deterministic Encoding of what it decodes to.
	ErrNonCanonical = errors.New("not the deterministic encoding")

	// ErrTooLarge is wrapped (with ErrMalformed) when the input exceeds
	// MaxRecordSize.
	ErrTooLarge = errors.New("record too large")

	// ErrUnknownVersion is wrapped (with ErrMalformed) when a record's "v"
	// is not a schema version this build knows.
	ErrUnknownVersion = errors.New("unknown schema version")

	// The following name the specific CBOR rule broken; each is wrapped
	// together with ErrMalformed.
	ErrDuplicateKey  = errors.New("duplicate map key")
	ErrUnknownField  = errors.New("unknown field")
	ErrIndefinite    = errors.New("indefinite-length item")
	ErrTag           = errors.New("unexpected CBOR tag")
	ErrLimit         = errors.New("decoding limit exceeded")
	ErrTrailingData  = errors.New("trailing data after the item")
	ErrInvalidUTF8   = errors.New("invalid UTF-8 in a text string")
	ErrWrongCBORType = errors.New("wrong CBOR type for a field")
	ErrNotWellFormed = errors.New("not well-formed CBOR")
)

// classify wraps a CBOR decoding error with ErrMalformed and the sentinel
// for the rule it broke.
func classify(err error) error {
	var (
		dup    *cbor.DupMapKeyError
		unk    *cbor.UnknownFieldError
		indef  *cbor.IndefiniteLengthError
		tag    *cbor.TagsMdError
		nest   *cbor.MaxNestedLevelError
		arr    *cbor.MaxArrayElementsError
		pairs  *cbor.MaxMapPairsError
		extra  *cbor.ExtraneousDataError
		sem    *cbor.SemanticError
		typ    *cbor.UnmarshalTypeError
		syntax *cbor.SyntaxError
	)
	var kind error
	switch {
	case errors.As(err, &dup):
		kind = ErrDuplicateKey
	case errors.As(err, &unk):
		kind = ErrUnknownField
	case errors.As(err, &indef):
		kind = ErrIndefinite
	case errors.As(err, &tag):
		kind = ErrTag
	case errors.As(err, &nest), errors.As(err, &arr), errors.As(err, &pairs):
		kind = ErrLimit
	case errors.As(err, &extra):
		kind = ErrTrailingData
	case errors.As(err, &sem) && strings.Contains(sem.Error(), "UTF-8"):
		kind = ErrInvalidUTF8
	case errors.As(err, &typ):
		kind = ErrWrongCBORType
	case errors.As(err, &syntax), errors.As(err, &sem), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		kind = ErrNotWellFormed
	default:
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return fmt.Errorf("%w: %w: %w", ErrMalformed, kind, err)
}

var (
	encMode cbor.EncMode
	decMode cbor.DecMode
	// peekMode decodes only the schema version; it ignores other fields so
	// that an unknown version is reported as such, not as unknown fields.
	peekMode cbor.DecMode
	// genericMode and genericEnc check structures that are not records
	// (COSE envelopes): tags are allowed there and kept for re-encoding.
	genericMode cbor.DecMode
	genericEnc  cbor.EncMode
	// structureMode decodes the array shapes of envelopes (no unknown-field
	// rule: they are arrays, and canonical form is checked separately).
	structureMode cbor.DecMode
	// foreignMode checks well-formedness of envelopes made elsewhere:
	// strict about duplicates and indefinite lengths, with the wider limits
	// below, and without writ's canonical-encoding rule.
	foreignMode cbor.DecMode
)

// Limits for envelopes made elsewhere (`writ verify`), which are not bound
// by writ's own record shapes.
const (
	// MaxForeignNesting allows COSE structures with nested countersignatures.
	MaxForeignNesting = 16
	// MaxForeignElements bounds any array or map in a foreign envelope.
	MaxForeignElements = 4096
)

func init() {
	var err error
	encMode, err = cbor.EncOptions{
		Sort:          cbor.SortCoreDeterministic,
		ShortestFloat: cbor.ShortestFloat16,
		IndefLength:   cbor.IndefLengthForbidden,
		NilContainers: cbor.NilContainerAsNull,
		TagsMd:        cbor.TagsForbidden,
		Time:          cbor.TimeUnix,
	}.EncMode()
	if err != nil {
		panic(err)
	}
	strict := cbor.DecOptions{
		DupMapKey:         cbor.DupMapKeyEnforcedAPF,
		IndefLength:       cbor.IndefLengthForbidden,
		TagsMd:            cbor.TagsForbidden,
		MaxNestedLevels:   MaxNestingDepth,
		MaxArrayElements:  MaxArrayElements,
		MaxMapPairs:       MaxMapPairs,
		UTF8:              cbor.UTF8RejectInvalid,
		FieldNameMatching: cbor.FieldNameMatchingCaseSensitive,
		ExtraReturnErrors: cbor.ExtraDecErrorUnknownField,
	}
	decMode, err = strict.DecMode()
	if err != nil {
		panic(err)
	}
	strict.ExtraReturnErrors = cbor.ExtraDecErrorNone
	peekMode, err = strict.DecMode()
	if err != nil {
		panic(err)
	}
	strict.TagsMd = cbor.TagsAllowed
	genericMode, err = strict.DecMode()
	if err != nil {
		panic(err)
	}
	structureMode, err = cbor.DecOptions{
		DupMapKey:        cbor.DupMapKeyEnforcedAPF,
		IndefLength:      cbor.IndefLengthForbidden,
		MaxNestedLevels:  MaxNestingDepth,
		MaxArrayElements: MaxArrayElements,
		MaxMapPairs:      MaxMapPairs,
		UTF8:             cbor.UTF8RejectInvalid,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	foreignMode, err = cbor.DecOptions{
		DupMapKey:        cbor.DupMapKeyEnforcedAPF,
		IndefLength:      cbor.IndefLengthForbidden,
		MaxNestedLevels:  MaxForeignNesting,
		MaxArrayElements: MaxForeignElements,
		MaxMapPairs:      MaxForeignElements,
		UTF8:             cbor.UTF8RejectInvalid,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	genericEnc, err = cbor.EncOptions{
		Sort:          cbor.SortCoreDeterministic,
		ShortestFloat: cbor.ShortestFloat16,
		NaNConvert:    cbor.NaNConvert7e00,
		InfConvert:    cbor.InfConvertFloat16,
		IndefLength:   cbor.IndefLengthForbidden,
	}.EncMode()
	if err != nil {
		panic(err)
	}
}

// Marshal encodes v with Core Deterministic Encoding (RFC 8949 §4.2.1).
// It returns an error wrapping ErrTooLarge if the encoding exceeds
// MaxRecordSize bytes, and any error from the CBOR encoder unchanged.
func Marshal(v any) ([]byte, error) {
	b, err := encMode.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxRecordSize {
		return nil, fmt.Errorf("%w: %w: %d bytes, larger than the %d-byte limit", ErrMalformed, ErrTooLarge, len(b), MaxRecordSize)
	}
	return b, nil
}

// Unmarshal decodes data into v (a pointer to a record struct) under every
// rule in the package doc: size, duplicate keys, indefinite lengths, tags,
// UTF-8, unknown fields, limits, and canonical re-encoding. On any failure
// it returns an error wrapping ErrMalformed and leaves no partial result
// the caller should use. It does not apply field rules; see [Decode].
func Unmarshal(data []byte, v any) error {
	if len(data) > MaxRecordSize {
		return fmt.Errorf("%w: %w: larger than the %d-byte limit", ErrMalformed, ErrTooLarge, MaxRecordSize)
	}
	if err := decMode.Unmarshal(data, v); err != nil {
		var unknown *cbor.UnknownFieldError
		if errors.As(err, &unknown) {
			if names := unknownFields(data, v); len(names) > 0 {
				return fmt.Errorf("%w: %w %q for this record kind and schema version", ErrMalformed, ErrUnknownField, names[0])
			}
		}
		return classify(err)
	}
	again, err := encMode.Marshal(v)
	if err != nil {
		return fmt.Errorf("%w: re-encoding: %w", ErrMalformed, err)
	}
	if !bytes.Equal(again, data) {
		return fmt.Errorf("%w: %w", ErrMalformed, ErrNonCanonical)
	}
	return nil
}

// CheckCanonical reports whether data is exactly one well-formed CBOR item
// in Core Deterministic Encoding (RFC 8949 §4.2.1: preferred serialization,
// shortest floats included, definite lengths, sorted map keys) that obeys
// the decoding limits above. It is used for structures that are not
// records, such as COSE envelopes. Stricter than §4.2.1, it also refuses
// the simple value undefined and tags 0 to 3 (date-times and bignums),
// which no writ structure contains. The error wraps ErrMalformed (and
// ErrNonCanonical when the item is well-formed but not canonical).
func CheckCanonical(data []byte) error {
	if len(data) > MaxRecordSize {
		return fmt.Errorf("%w: %w: larger than the %d-byte limit", ErrMalformed, ErrTooLarge, MaxRecordSize)
	}
	var generic any
	if err := genericMode.Unmarshal(data, &generic); err != nil {
		return classify(err)
	}
	again, err := genericEnc.Marshal(generic)
	if err != nil {
		return fmt.Errorf("%w: re-encoding: %w", ErrMalformed, err)
	}
	if !bytes.Equal(again, data) {
		return fmt.Errorf("%w: %w", ErrMalformed, ErrNonCanonical)
	}
	return nil
}

// DecodeStructure decodes data (already checked with CheckCanonical) into
// v, an array-shaped struct such as a COSE message's outer structure,
// under the strict limits; the error wraps ErrMalformed and a sentinel.
func DecodeStructure(data []byte, v any) error {
	if err := structureMode.Unmarshal(data, v); err != nil {
		return classify(err)
	}
	return nil
}

// CheckWellFormed reports whether data is exactly one well-formed CBOR
// item without duplicate map keys or indefinite lengths, within the
// foreign limits, for envelopes writ did not make. The error wraps
// ErrMalformed and a sentinel.
func CheckWellFormed(data []byte) error {
	var generic any // decoding, not just scanning, enforces duplicate keys
	if err := foreignMode.Unmarshal(data, &generic); err != nil {
		return classify(err)
	}
	return nil
}

// peekVersion returns the "v" field of a record map, decoding nothing else
// into memory beyond what the strict limits allow.
func peekVersion(data []byte) (uint64, error) {
	var p struct {
		V *uint64 `cbor:"v"`
	}
	if err := peekMode.Unmarshal(data, &p); err != nil {
		return 0, classify(err)
	}
	if p.V == nil {
		return 0, fmt.Errorf("%w: field \"v\" (schema version) is missing", ErrMalformed)
	}
	return *p.V, nil
}

// unknownFields returns the top-level map keys of data that are not
// fields of the struct v points to, sorted, to name them in an
// error. It returns nil when it cannot tell.
func unknownFields(data []byte, v any) []string {
	rt := reflect.TypeOf(v)
	if rt.Kind() != reflect.Pointer || rt.Elem().Kind() != reflect.Struct {
		return nil
	}
	known := map[string]bool{}
	for i := range rt.Elem().NumField() {
		name, _, _ := strings.Cut(rt.Elem().Field(i).Tag.Get("cbor"), ",")
		known[name] = true
	}
	var m map[string]cbor.RawMessage
	if err := peekMode.Unmarshal(data, &m); err != nil {
		return nil
	}
	var out []string
	for k := range m {
		if !known[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
