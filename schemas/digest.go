package schemas

import (
	"crypto/sha256"
	"encoding/hex"
)

// SHA256Digest returns "sha256:" and the 64 lowercase hex digits of the
// SHA-256 (FIPS 180-4) of b. For files, use package transfer, which hashes
// as it streams.
func SHA256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
