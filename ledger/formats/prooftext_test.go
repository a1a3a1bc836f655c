package formats

import (
	"encoding/hex"
	"slices"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

func TestProofLines(t *testing.T) {
	h := func(b byte) tlog.Hash { var x tlog.Hash; x[0] = b; return x }
	x := func(b byte) string { v := h(b); return hex.EncodeToString(v[:]) }
	ip := &InclusionProof{Index: 3, TreeSize: 7, LeafHash: h(1), RootHash: h(2), Path: []tlog.Hash{h(3), h(4)}}
	want := []string{"entry 3 in tree size 7", "leaf hash: " + x(1), "root hash: " + x(2), "proof: " + x(3) + " " + x(4)}
	if got := ip.Lines(); !slices.Equal(got, want) {
		t.Errorf("InclusionProof.Lines() = %q, want %q", got, want)
	}
	cp := &ConsistencyProof{OldSize: 2, NewSize: 5, OldRoot: h(5), NewRoot: h(6)}
	want = []string{"tree size 2 is a prefix of tree size 5", "old root: " + x(5), "new root: " + x(6), "proof: "}
	if got := cp.Lines(); !slices.Equal(got, want) {
		t.Errorf("ConsistencyProof.Lines() = %q, want %q", got, want)
	}
}
