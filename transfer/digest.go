package transfer

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/writ-ledger/writ/schemas"
)

// hashBuffer is the read size while hashing, in bytes: large enough that
// system calls cost nothing next to SHA-256, small enough to be constant.
const hashBuffer = 256 << 10

// ErrDigestMismatch: a file's locally computed digest differs from the
// expected digest.
var ErrDigestMismatch = errors.New("digest mismatch")

// MismatchError is the evidence of a digest mismatch: the file, the digest
// expected and the digest computed here. It wraps ErrDigestMismatch.
type MismatchError struct {
	Path     string
	Expected string
	Actual   string
}

// Error names the file and both digests.
func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s hashes to %s, expected %s", e.Path, e.Actual, e.Expected)
}

// Unwrap returns ErrDigestMismatch.
func (e *MismatchError) Unwrap() error { return ErrDigestMismatch }

// DigestReader hashes r to its end and returns the digest and the number
// of bytes read.
func DigestReader(r io.Reader) (string, int64, error) {
	h := sha256.New()
	n, err := io.CopyBuffer(h, r, make([]byte, hashBuffer))
	if err != nil {
		return "", n, err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

// DigestFile hashes the regular file at path and returns its digest and
// size in bytes.
func DigestFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("%s: not a regular file", path)
	}
	d, n, err := DigestReader(f)
	if err != nil {
		return "", 0, fmt.Errorf("hashing %s: %w", path, err)
	}
	return d, n, nil
}

// Compare hashes the file at path and compares it with expected, a
// digest computed elsewhere (a pin, an instruction). It returns the digest
// computed here, and a *MismatchError (wrapping ErrDigestMismatch) when
// they differ. expected must be a valid digest.
func Compare(path, expected string) (string, error) {
	if !schemas.ValidDigest(expected) {
		return "", fmt.Errorf("expected digest %q: must be sha256: and 64 lowercase hex digits", expected)
	}
	actual, _, err := DigestFile(path)
	if err != nil {
		return "", err
	}
	if actual != expected {
		return actual, &MismatchError{Path: path, Expected: expected, Actual: actual}
	}
	return actual, nil
}
