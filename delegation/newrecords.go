package delegation

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// The constructors of the records an operator signs besides roots
// (NewRoot) and pins (transfer.NewPin): each returns a record that
// passes its Validate, the rule every reader applies, or that rule's
// *schemas.FieldError naming the field; writ never signs what it would
// refuse to read.

// ErrNegativeDepth: a delegation's re-delegation depth is a count.
var ErrNegativeDepth = errors.New("delegation.depth: must not be negative")

// DelegationParams is what a delegation grants (spec: DESIGN.md,
// records). Sets are taken as given, each value whole, and sorted with
// repeats dropped; times are whole seconds.
type DelegationParams struct {
	To                           sign.PublicKey    // the delegate's key
	Actions                      []schemas.Action  // what it may sign
	Streams, Machines, Artifacts []string          // patterns its acts are bounded to
	Builders                     []schemas.Builder // with pin: the builders (id and key) its pins' provenance must come from
	NotBefore, NotAfter          time.Time         // its window, NotAfter exclusive
	Depth                        int               // further links it may delegate
	IssuedAt                     time.Time
}

// NewDelegation returns the delegation p describes. Errors: ErrNegativeDepth,
// or the record's *schemas.FieldError.
func NewDelegation(p DelegationParams) (*schemas.Delegation, error) {
	if p.Depth < 0 {
		return nil, ErrNegativeDepth
	}
	rec := &schemas.Delegation{
		V: schemas.SchemaVersion, Key: p.To.Raw(), Actions: sortedSet(p.Actions),
		Streams: sortedSet(p.Streams), Machines: sortedSet(p.Machines), Artifacts: sortedSet(p.Artifacts), Builders: sortedBuilders(p.Builders),
		NotBefore: p.NotBefore.Unix(), NotAfter: p.NotAfter.Unix(), Depth: uint64(p.Depth), IssuedAt: p.IssuedAt.Unix(),
	}
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	return rec, nil
}

// sortedSet sorts values and drops repeats, each value kept whole.
func sortedSet[T ~string](values []T) []T {
	out := slices.Clone(values)
	slices.Sort(out)
	return slices.Compact(out)
}

// sortedBuilders sorts builders by id, then key, and drops repeats.
func sortedBuilders(bs []schemas.Builder) []schemas.Builder {
	out := slices.Clone(bs)
	slices.SortFunc(out, schemas.Builder.Compare)
	return slices.Compact(out)
}

// NewInstruction fills in rec's schema version and a fresh id (128 bits
// from rand, as 32 lowercase hex digits) and checks it. Errors: rand's,
// or the record's *schemas.FieldError.
func NewInstruction(rec schemas.Instruction, rand io.Reader) (*schemas.Instruction, error) {
	id := make([]byte, 16)
	if _, err := io.ReadFull(rand, id); err != nil {
		return nil, fmt.Errorf("instruction id: %w", err)
	}
	rec.V, rec.ID = schemas.SchemaVersion, hex.EncodeToString(id)
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	return &rec, nil
}

// RevocationTarget returns what a revocation of the thing in data
// targets: the key id of a PEM public key, or the SHA-256 digest
// ("sha256:" + 64 hex) of any other bytes, a signed record as it was
// appended. A private key file is refused (its digest would revoke
// nothing): the error wraps sign.ErrPrivateKeyFile.
func RevocationTarget(data []byte) (string, error) {
	k, err := sign.ParsePublicKeyPEM(data)
	switch {
	case err == nil:
		return k.ID(), nil
	case errors.Is(err, sign.ErrPrivateKeyFile):
		return "", err
	}
	return schemas.SHA256Digest(data), nil
}

// NewRevocation returns a revocation of target (a key id or record
// digest, see RevocationTarget) for reason. Errors: the record's
// *schemas.FieldError.
func NewRevocation(target, reason string, issuedAt time.Time) (*schemas.Revocation, error) {
	rec := &schemas.Revocation{V: schemas.SchemaVersion, Target: target, Reason: reason, IssuedAt: issuedAt.Unix()}
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	return rec, nil
}

// NewIssuer returns an issuer record: tokens whose iss is issuer, their
// keys at exactly jwksURI, for any of audiences (sorted, repeats
// dropped). Errors: the record's *schemas.FieldError.
func NewIssuer(issuer, jwksURI string, audiences []string, issuedAt time.Time) (*schemas.Issuer, error) {
	rec := &schemas.Issuer{V: schemas.SchemaVersion, Issuer: issuer, JWKSURI: jwksURI,
		Audiences: sortedSet(audiences), IssuedAt: issuedAt.Unix()}
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	return rec, nil
}

// NewQuarantine returns a quarantine of machine until the given time
// (the zero time: until lifted), or with lift its end. Errors: the
// record's *schemas.FieldError (a lift with an end time among them).
func NewQuarantine(machine string, until time.Time, lift bool, issuedAt time.Time) (*schemas.Quarantine, error) {
	rec := &schemas.Quarantine{V: schemas.SchemaVersion, Machine: machine, Lift: lift, IssuedAt: issuedAt.Unix()}
	if !until.IsZero() {
		rec.Until = until.Unix()
	}
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	return rec, nil
}

// ParseRootEnvelope returns the root record a signed envelope carries,
// without checking its signatures (a rotation's previous root: they
// are checked against the ledger when the rotation is appended). Errors:
// the envelope's parse error, or "not a root record" wrapping the
// decoder's error or naming the kind the envelope carries.
func ParseRootEnvelope(data []byte) (*schemas.Root, error) {
	env, err := sign.ParseEnvelope(data)
	if err != nil {
		return nil, err
	}
	rec, err := schemas.Decode(schemas.KindRoot, env.Payload)
	if err == nil && env.Kind != schemas.KindRoot {
		err = fmt.Errorf("a %s record", env.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("not a root record: %w", err)
	}
	return rec.(*schemas.Root), nil
}
