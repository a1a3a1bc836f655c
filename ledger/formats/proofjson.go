package formats

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// MaxProofHashes bounds a proof file's path: an RFC 9162 proof in a tree
// of fewer than 2^63 entries has at most 2×63 hashes.
const MaxProofHashes = 126

// consistencyJSON is a consistency proof file: `writ ledger consistency
// --json` writes it, `writ witness add-checkpoint --proof` reads it.
// Hashes are lowercase hex; sizes are entry counts.
type consistencyJSON struct {
	NewRoot *string  `json:"new_root" doc:"the root hash of the larger tree, hex"`
	NewSize *int64   `json:"new_size" doc:"its size, entries"`
	OldRoot *string  `json:"old_root" doc:"the root hash of the smaller tree, hex"`
	OldSize *int64   `json:"old_size" doc:"its size, entries"`
	Proof   []string `json:"proof" doc:"hashes, hex, RFC 9162 §2.1.4"`
}

// JSONShape is the struct MarshalJSON writes, for a reader of its fields
// and their doc tags (writ ledger consistency --help lists them).
func (ConsistencyProof) JSONShape() any { return consistencyJSON{} }

// MarshalJSON writes p as a consistency proof file: {"new_root",
// "new_size", "old_root", "old_size", "proof"}, hashes in hex.
func (p ConsistencyProof) MarshalJSON() ([]byte, error) {
	nr, or := hex.EncodeToString(p.NewRoot[:]), hex.EncodeToString(p.OldRoot[:])
	return json.Marshal(consistencyJSON{NewRoot: &nr, NewSize: &p.NewSize, OldRoot: &or, OldSize: &p.OldSize, Proof: HexHashes(p.Path)})
}

// inclusionJSON is an inclusion proof as `writ ledger prove --json`
// prints it. Hashes are lowercase hex; sizes are entry counts.
type inclusionJSON struct {
	Index    int64    `json:"index" doc:"the entry"`
	TreeSize int64    `json:"tree_size" doc:"the tree proven into"`
	LeafHash string   `json:"leaf_hash" doc:"hex"`
	RootHash string   `json:"root_hash" doc:"hex"`
	Proof    []string `json:"proof" doc:"hashes, hex, RFC 9162 §2.1.3"`
}

// JSONShape is the struct MarshalJSON writes, for a reader of its fields
// and their doc tags (writ ledger prove --help lists them).
func (InclusionProof) JSONShape() any { return inclusionJSON{} }

// MarshalJSON writes p as {"index", "tree_size", "leaf_hash",
// "root_hash", "proof"}, hashes in hex (proof [] when empty).
func (p InclusionProof) MarshalJSON() ([]byte, error) {
	return json.Marshal(inclusionJSON{Index: p.Index, TreeSize: p.TreeSize,
		LeafHash: hex.EncodeToString(p.LeafHash[:]), RootHash: hex.EncodeToString(p.RootHash[:]), Proof: HexHashes(p.Path)})
}

// HexHashes returns each of hs as 64 lowercase hex digits, in order (an
// empty slice, not nil, for none).
func HexHashes(hs []tlog.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = hex.EncodeToString(h[:])
	}
	return out
}

// UnmarshalJSON reads a consistency proof file, strictly: every field
// present and no other, 0 <= old_size <= new_size, each hash 64 hex
// digits, at most MaxProofHashes in the proof, and the proof verifying
// against the file's own roots (Verify). Errors wrap ErrProof and name
// the field.
func (p *ConsistencyProof) UnmarshalJSON(data []byte) error {
	var f consistencyJSON
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&f); err != nil {
		return fmt.Errorf("%w: not a consistency proof file: %w", ErrProof, err)
	}
	if d.More() {
		return fmt.Errorf("%w: not a consistency proof file: more after the object", ErrProof)
	}
	switch {
	case f.NewRoot == nil || f.NewSize == nil || f.OldRoot == nil || f.OldSize == nil || f.Proof == nil:
		return fmt.Errorf("%w: a consistency proof file has new_root, new_size, old_root, old_size and proof", ErrProof)
	case *f.OldSize < 0 || *f.NewSize < *f.OldSize:
		return fmt.Errorf("%w: old_size %d, new_size %d: want 0 <= old_size <= new_size", ErrProof, *f.OldSize, *f.NewSize)
	case len(f.Proof) > MaxProofHashes:
		return fmt.Errorf("%w: proof: %d hashes, at most %d", ErrProof, len(f.Proof), MaxProofHashes)
	}
	q := ConsistencyProof{OldSize: *f.OldSize, NewSize: *f.NewSize}
	var err error
	if q.OldRoot, err = hexHash("old_root", *f.OldRoot); err != nil {
		return err
	}
	if q.NewRoot, err = hexHash("new_root", *f.NewRoot); err != nil {
		return err
	}
	for i, s := range f.Proof {
		h, err := hexHash(fmt.Sprintf("proof[%d]", i), s)
		if err != nil {
			return err
		}
		q.Path = append(q.Path, h)
	}
	if err := q.Verify(); err != nil {
		return err
	}
	*p = q
	return nil
}

// ParseConsistencyProofFile reads a consistency proof file (see
// ConsistencyProof.UnmarshalJSON for its rules); every error, invalid
// JSON included, wraps ErrProof.
func ParseConsistencyProofFile(data []byte) (*ConsistencyProof, error) {
	var p ConsistencyProof
	if err := p.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return &p, nil
}

// hexHash parses a hash written as 64 lowercase hex digits.
func hexHash(field, s string) (tlog.Hash, error) {
	var h tlog.Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != tlog.HashSize || hex.EncodeToString(b) != s {
		return h, fmt.Errorf("%w: %s %q is not 64 lowercase hex digits", ErrProof, field, s)
	}
	copy(h[:], b)
	return h, nil
}
