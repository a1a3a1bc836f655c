package ledger

import (
	"bytes"
	"encoding/hex"
	"fmt"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/sign"
)

// Receipt returns an RFC 9942 COSE Receipt (a tagged COSE_Sign1 with a
// detached payload) that entry index is in the log's current tree: the
// protected header names alg EdDSA, the log key's kid, vds 1 (RFC 9162
// SHA-256) and the log origin as CWT issuer; the unprotected header
// carries one inclusion proof; the signature covers the Merkle root the
// proof leads to (formats.SignReceipt). The tree is the one the latest
// signed checkpoint commits to, never a stored state nobody checkpointed:
// the entry is proven against the signed root first (VerifiedEntry; an
// *IntegrityError otherwise). When witnesses cosigned that checkpoint
// (CosignedCheckpoint), the receipt carries it with its cosignatures
// (formats.HeaderCheckpoint), so a verifier with a witness policy can
// check the receipt offline. It needs the log's key (ErrNoSigner
// otherwise).
func (l *Log) Receipt(index int64) ([]byte, error) {
	if l.key == nil {
		return nil, ErrNoSigner
	}
	head, err := l.SignedHead()
	if err != nil {
		return nil, err
	}
	if index >= head.Size {
		return nil, fmt.Errorf("%w: entry %d is not in the signed checkpoint (size %d)", formats.ErrProof, index, head.Size)
	}
	if _, err := l.VerifiedEntry(index); err != nil {
		return nil, err
	}
	p, err := l.ProveInclusion(index, head.Size)
	if err != nil {
		return nil, err
	}
	if p.RootHash != head.Hash {
		return nil, &IntegrityError{Index: -1, What: "stored root hash", Expected: hexHash(head.Hash), Found: hexHash(p.RootHash),
			Detail: "the stored tree is not the signed one; no receipt is signed"}
	}
	var witnessed []byte
	if full, err := l.CosignedCheckpoint(); err == nil {
		if cp, err := formats.OpenCheckpoint(full, l.lkey); err == nil && cp == head {
			if base, err := l.Checkpoint(); err == nil && string(base) != string(full) {
				witnessed = full
			}
		}
	}
	return formats.SignReceiptWith(p, l.origin, l.key, witnessed)
}

// VerifyReceipt checks an RFC 9942 receipt for entry, as
// formats.VerifyReceipt does (the inclusion proof it carries, or an error
// wrapping formats.ErrReceipt). A receipt that does not verify and whose protected header
// names another key (kid) than key is a *TrustError (rules.VKeyMismatch,
// wrapping ErrVKeyMismatch and formats.ErrReceipt): it is by another
// log's key, which the caller did not trust, rather than forged under
// this one.
func VerifyReceipt(receipt, entry []byte, key sign.PublicKey) (*formats.InclusionProof, error) {
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
