package ledger

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/note"
)

// The pure formats (checkpoints, cosignatures, proofs, receipts) live in
// package ledger/formats, which imports no storage. These names keep
// their old spelling in package ledger: the types are aliases and the
// errors the same values, so errors.Is and type identity hold across both.

// Checkpoint is formats.Checkpoint: the body of a C2SP tlog-checkpoint.
type Checkpoint = formats.Checkpoint

// TimedCheckpoint is formats.TimedCheckpoint: a checkpoint with its signed time.
type TimedCheckpoint = formats.TimedCheckpoint

// InclusionProof is formats.InclusionProof (RFC 9162 §2.1.3).
type InclusionProof = formats.InclusionProof

// ConsistencyProof is formats.ConsistencyProof (RFC 9162 §2.1.4).
type ConsistencyProof = formats.ConsistencyProof

// Errors of the formats, the same values as package formats'.
var (
	// ErrMalformedCheckpoint is formats.ErrMalformedCheckpoint.
	ErrMalformedCheckpoint = formats.ErrMalformedCheckpoint
	// ErrCheckpointSignature is formats.ErrCheckpointSignature.
	ErrCheckpointSignature = formats.ErrCheckpointSignature
	// ErrNoTime is formats.ErrNoTime.
	ErrNoTime = formats.ErrNoTime
	// ErrProof is formats.ErrProof.
	ErrProof = formats.ErrProof
	// ErrReceipt is formats.ErrReceipt.
	ErrReceipt = formats.ErrReceipt
)

// MaxCheckpointSize is formats.MaxCheckpointSize: the bound on a signed checkpoint, in bytes.
const MaxCheckpointSize = formats.MaxCheckpointSize

// COSE Receipts (RFC 9942) header labels and values, as in package formats.
const (
	// HeaderVDS is formats.HeaderVDS, the verifiable data structure label.
	HeaderVDS = formats.HeaderVDS
	// HeaderVDP is formats.HeaderVDP, the verifiable data proofs label.
	HeaderVDP = formats.HeaderVDP
	// VDSRFC9162 is formats.VDSRFC9162, the RFC 9162 SHA-256 Merkle tree.
	VDSRFC9162 = formats.VDSRFC9162
	// ProofInclusion is formats.ProofInclusion, the inclusion-proofs key.
	ProofInclusion = formats.ProofInclusion
)

// ParseCheckpoint is formats.ParseCheckpoint: it parses a checkpoint body strictly.
func ParseCheckpoint(body string) (Checkpoint, error) { return formats.ParseCheckpoint(body) }

// OpenCheckpoint is formats.OpenCheckpoint: it verifies a signed checkpoint under vkey.
func OpenCheckpoint(signed []byte, vkey string) (Checkpoint, error) {
	return formats.OpenCheckpoint(signed, vkey)
}

// OpenTimedCheckpoint is formats.OpenTimedCheckpoint: it verifies a checkpoint's cosignature/v1.
func OpenTimedCheckpoint(signed []byte, vkey string) (TimedCheckpoint, error) {
	return formats.OpenTimedCheckpoint(signed, vkey)
}

// CheckpointTime is formats.CheckpointTime: the signed time of a checkpoint.
func CheckpointTime(signed []byte, vkey string) (time.Time, error) {
	return formats.CheckpointTime(signed, vkey)
}

// ValidOrigin is formats.ValidOrigin: whether s can be a log origin.
func ValidOrigin(s string) bool { return formats.ValidOrigin(s) }

// VerifierKey is formats.VerifierKey: the signed-note verifier key for origin and k.
func VerifierKey(origin string, k sign.PublicKey) (string, error) {
	return formats.VerifierKey(origin, k)
}

// NewVerifier is formats.NewVerifier: it parses a signed-note verifier key strictly.
func NewVerifier(vkey string) (note.Verifier, error) { return formats.NewVerifier(vkey) }

// VerifierPublicKey is formats.VerifierPublicKey: the Ed25519 key inside a verifier key.
func VerifierPublicKey(vkey string) (sign.PublicKey, error) { return formats.VerifierPublicKey(vkey) }

// VerifyReceipt is formats.VerifyReceipt: it checks an RFC 9942 receipt
// for entry. A receipt that does not verify and whose protected header
// names another key (kid) than key is a *TrustError (rules.VKeyMismatch,
// wrapping ErrVKeyMismatch and formats.ErrReceipt): it is by another
// log's key, which the caller did not trust, rather than forged under
// this one.
func VerifyReceipt(receipt, entry []byte, key sign.PublicKey) (*InclusionProof, error) {
	p, err := formats.VerifyReceipt(receipt, entry, key)
	if err == nil {
		return p, nil
	}
	if kid, kerr := formats.ReceiptKeyID(receipt); kerr == nil && !bytes.Equal(kid, key.IDBytes()) {
		return nil, &TrustError{Rule: rules.VKeyMismatch, What: "the receipt's signing key (its protected kid)",
			Expected: "key id " + key.ID(), Found: "key id " + hex.EncodeToString(kid), Err: fmt.Errorf("%w: %w", ErrVKeyMismatch, err)}
	}
	return nil, err
}
