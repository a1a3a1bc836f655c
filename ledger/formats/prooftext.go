package formats

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// Lines returns the proof as writ ledger prove prints it for people: the
// entry and tree size, the leaf and root hashes, and the audit path, each
// hash as lowercase hex, four lines.
func (p *InclusionProof) Lines() []string {
	return []string{
		fmt.Sprintf("entry %d in tree size %d", p.Index, p.TreeSize),
		"leaf hash: " + hex.EncodeToString(p.LeafHash[:]),
		"root hash: " + hex.EncodeToString(p.RootHash[:]),
		"proof: " + strings.Join(HexHashes(p.Path), " "),
	}
}

// Lines returns the proof as writ ledger consistency prints it for
// people: the two tree sizes, both roots and the proof's hashes, each as
// lowercase hex, four lines.
func (p *ConsistencyProof) Lines() []string {
	return []string{
		fmt.Sprintf("tree size %d is a prefix of tree size %d", p.OldSize, p.NewSize),
		"old root: " + hex.EncodeToString(p.OldRoot[:]),
		"new root: " + hex.EncodeToString(p.NewRoot[:]),
		"proof: " + strings.Join(HexHashes(p.Path), " "),
	}
}
