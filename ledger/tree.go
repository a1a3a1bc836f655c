package ledger

import "github.com/writ-ledger/writ/ledger/internal/merkle"

// TreeBuilder recomputes an RFC 6962 Merkle tree from its leaves in
// order in memory that does not grow with the log (merkle.Builder).
type TreeBuilder = merkle.Builder
