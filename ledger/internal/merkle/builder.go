// Package merkle builds RFC 6962 Merkle trees incrementally, for package
// ledger's writers and verifiers (ledger.TreeBuilder).
package merkle

import "golang.org/x/mod/sumdb/tlog"

// Builder recomputes an RFC 6962 Merkle tree from its leaves in order,
// holding one hash per tree level (the roots of the complete subtrees so
// far), so memory does not grow with the log. The zero Builder is an
// empty tree.
type Builder struct {
	n     int64
	stack []tlog.Hash // largest (leftmost) subtree first
}

// Resume returns a Builder of a tree of n leaves whose complete subtrees
// have the given roots, largest (leftmost) first: one per bit set in n,
// from the highest.
func Resume(n int64, roots []tlog.Hash) Builder {
	return Builder{n: n, stack: roots}
}

// Add appends the next leaf hash and returns the hashes it completes, in
// the order tlog stores them for this record: the leaf, then each parent
// it closes.
func (b *Builder) Add(leaf tlog.Hash) []tlog.Hash {
	produced := []tlog.Hash{leaf}
	b.stack = append(b.stack, leaf)
	for n := b.n; n&1 == 1; n >>= 1 {
		top := len(b.stack) - 1
		parent := tlog.NodeHash(b.stack[top-1], b.stack[top])
		b.stack = append(b.stack[:top-1], parent)
		produced = append(produced, parent)
	}
	b.n++
	return produced
}

// Root returns the RFC 6962 root of the leaves added so far.
func (b *Builder) Root() tlog.Hash {
	if len(b.stack) == 0 {
		r, _ := tlog.TreeHash(0, nil)
		return r
	}
	r := b.stack[len(b.stack)-1]
	for j := len(b.stack) - 2; j >= 0; j-- {
		r = tlog.NodeHash(b.stack[j], r)
	}
	return r
}
