package formats

import (
	"encoding/hex"
	"fmt"

	"github.com/veraison/go-cose"
)

// ReceiptInfo is what a receipt states, read from its structure alone
// (DescribeReceipt): nothing in it is verified. Its JSON is part of writ
// inspect's result.
type ReceiptInfo struct {
	Origin     string `json:"origin" doc:"the log origin the receipt names (CWT issuer, RFC 9597); not verified"`
	KeyID      string `json:"key_id" doc:"the log key id the receipt's protected kid names (64 hex)"`
	Index      int64  `json:"index" doc:"the entry index it states (0-based; RFC 9942 does not sign it)"`
	TreeSize   int64  `json:"tree_size" doc:"the tree size it states (entries)"`
	PathHashes int    `json:"path_hashes" doc:"hashes in its inclusion path"`
	// Checkpoint is the signed checkpoint it carries (HeaderCheckpoint),
	// "" when none.
	Checkpoint string `json:"checkpoint,omitempty" doc:"the signed checkpoint it carries, with witness cosignatures, when it carries one"`
}

// DescribeReceipt reads an RFC 9942 receipt's structure (as VerifyReceipt
// does before any cryptography) and returns what it states. It verifies
// nothing. Errors wrap ErrReceipt.
func DescribeReceipt(receipt []byte) (*ReceiptInfo, error) {
	m, p, err := parseReceipt(receipt)
	if err != nil {
		return nil, err
	}
	info := &ReceiptInfo{Index: p.Index, TreeSize: p.TreeSize, PathHashes: len(p.Path)}
	if kid, ok := m.Headers.Protected[cose.HeaderLabelKeyID].([]byte); ok {
		info.KeyID = hex.EncodeToString(kid)
	}
	if claims, ok := m.Headers.Protected[int64(headerCWTClaims)].(map[any]any); ok {
		if iss, ok := claims[int64(1)].(string); ok {
			info.Origin = iss
		}
	}
	if cp, ok := m.Headers.Unprotected[int64(HeaderCheckpoint)]; ok {
		b, ok := cp.([]byte)
		if !ok || len(b) > MaxCheckpointSize {
			return nil, fmt.Errorf("%w: its checkpoint (label %d) is not a byte string of at most %d bytes", ErrReceipt, HeaderCheckpoint, MaxCheckpointSize)
		}
		info.Checkpoint = string(b)
	}
	return info, nil
}
