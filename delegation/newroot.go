package delegation

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// ErrRootParams is wrapped by every refusal of NewRoot: a root record
// that, signed as planned, the ledger would refuse (or that is not a
// root at all).
var ErrRootParams = errors.New("invalid root")

// RootParams is a root record to make (writ root sign): its keys and
// threshold, its window, the root it rotates (nil for a ledger's first
// root) and the keys that will sign it.
type RootParams struct {
	Keys      []sign.PublicKey // the root's keys, distinct, at least one
	Threshold int              // distinct keys of this root that must sign a root act: 1 to len(Keys)
	IssuedAt  time.Time        // stored in Unix seconds
	Expires   time.Time        // after IssuedAt
	Previous  *schemas.Root    // the root in force this one rotates, or nil
	Signers   []sign.PublicKey // the keys that will sign the record
}

// NewRoot returns the root record p describes, version 1 or the previous
// root's version + 1, with its keys sorted, after the checks Apply makes
// of a root's signers (applyRoot): every signer is a key of this root or
// of the previous one, at least Threshold of this root's keys sign, and
// at least the previous root's threshold of its keys sign a rotation. It
// does not check the previous root's own signatures: the ledger does,
// when the rotation is appended. Errors wrap ErrRootParams and name the
// key or the counts at fault.
func NewRoot(p RootParams) (*schemas.Root, error) {
	if len(p.Keys) == 0 {
		return nil, fmt.Errorf("%w: no root keys", ErrRootParams)
	}
	if p.Threshold < 1 || p.Threshold > len(p.Keys) {
		return nil, fmt.Errorf("%w: threshold %d: must be between 1 and the number of root keys (%d)", ErrRootParams, p.Threshold, len(p.Keys))
	}
	if !p.Expires.After(p.IssuedAt) {
		return nil, fmt.Errorf("%w: it expires at %s, not after it is issued (%s)", ErrRootParams, p.Expires.UTC().Format(time.RFC3339), p.IssuedAt.UTC().Format(time.RFC3339))
	}
	raw := make([][]byte, 0, len(p.Keys))
	for _, k := range p.Keys {
		if slices.ContainsFunc(raw, func(r []byte) bool { return bytes.Equal(r, k.Raw()) }) {
			return nil, fmt.Errorf("%w: key %s listed twice", ErrRootParams, k.ID())
		}
		raw = append(raw, k.Raw())
	}
	slices.SortFunc(raw, bytes.Compare)
	version, prevKeys := uint64(1), []sign.PublicKey(nil)
	if p.Previous != nil {
		// As applyRoot: a rotation is issued while the root it replaces is
		// in force, and not before that root was issued.
		if p.IssuedAt.Unix() >= p.Previous.Expires {
			return nil, fmt.Errorf("%w: the previous root (version %d) expired at %s: an expired root cannot be rotated; make a new ledger", ErrRootParams, p.Previous.Version, time.Unix(p.Previous.Expires, 0).UTC().Format(time.RFC3339))
		}
		if p.IssuedAt.Unix() < p.Previous.IssuedAt {
			return nil, fmt.Errorf("%w: issued at %s, before the previous root (%s)", ErrRootParams, p.IssuedAt.UTC().Format(time.RFC3339), time.Unix(p.Previous.IssuedAt, 0).UTC().Format(time.RFC3339))
		}
		version = p.Previous.Version + 1
		for _, r := range p.Previous.Keys {
			k, err := sign.NewPublicKey(r)
			if err != nil {
				return nil, fmt.Errorf("%w: the previous root: %w", ErrRootParams, err)
			}
			prevKeys = append(prevKeys, k)
		}
	}
	for _, k := range p.Signers {
		if !slices.ContainsFunc(p.Keys, k.Equal) && !slices.ContainsFunc(prevKeys, k.Equal) {
			return nil, fmt.Errorf("%w: signer %s is not one of the root's keys (or of the previous root's)", ErrRootParams, k.ID())
		}
	}
	if n := countAmong(p.Signers, p.Keys); n < uint64(p.Threshold) {
		return nil, fmt.Errorf("%w: %d of the new root's keys sign, its threshold is %d", ErrRootParams, n, p.Threshold)
	}
	if p.Previous != nil {
		if n := countAmong(p.Signers, prevKeys); n < p.Previous.Threshold {
			return nil, fmt.Errorf("%w: %d of the previous root's keys sign, its threshold is %d", ErrRootParams, n, p.Previous.Threshold)
		}
	}
	r := &schemas.Root{V: schemas.SchemaVersion, Version: version, Keys: raw, Threshold: uint64(p.Threshold),
		IssuedAt: p.IssuedAt.Unix(), Expires: p.Expires.Unix()}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRootParams, err)
	}
	return r, nil
}
