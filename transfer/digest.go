package transfer

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"sync"
)

// hashBuffer is the read size while hashing, in bytes: large enough that
// system calls cost nothing next to the hash, small enough to be constant.
const hashBuffer = 1 << 20

// Errors for digests.
var (
	// ErrDigestMismatch: a file's locally computed digest differs from the
	// expected digest.
	ErrDigestMismatch = errors.New("digest mismatch")
	// ErrDigestSyntax: a digest is not "<algorithm>:<lowercase hex>" with
	// an algorithm writ accepts (sha256, sha384, sha512) and the matching
	// length.
	ErrDigestSyntax = errors.New("malformed digest")
)

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

// Algorithms are the digest algorithms writ computes and compares, by the
// name a digest carries (FIPS 180-4). Anything else is refused.
var Algorithms = map[string]func() hash.Hash{
	"sha256": sha256.New,
	"sha384": sha512.New384,
	"sha512": sha512.New,
}

// ParseDigest splits "<algorithm>:<hex>" and checks the algorithm is one
// of Algorithms and the hex is lowercase and of that algorithm's length.
// Errors wrap ErrDigestSyntax.
func ParseDigest(d string) (alg string, sum []byte, err error) {
	alg, h, ok := strings.Cut(d, ":")
	newHash := Algorithms[alg]
	if !ok || newHash == nil {
		return "", nil, fmt.Errorf("%w: %q: the algorithm must be sha256, sha384 or sha512, named before a ':'", ErrDigestSyntax, d)
	}
	sum, err = hex.DecodeString(h)
	if err != nil || len(sum) != newHash().Size() || h != strings.ToLower(h) {
		return "", nil, fmt.Errorf("%w: %q: want %d lowercase hex digits after the algorithm %s and a colon", ErrDigestSyntax, d, 2*newHash().Size(), alg)
	}
	return alg, sum, nil
}

// hashBuffers recycles the read buffers, so that a runner hashing many
// small files per admission does not allocate a megabyte for each.
var hashBuffers = sync.Pool{New: func() any { b := make([]byte, hashBuffer); return &b }}

// DigestReader hashes r to its end with alg (a key of Algorithms) and
// returns the digest and the number of bytes read. Memory is one fixed
// buffer, whatever the length.
func DigestReader(r io.Reader, alg string) (string, int64, error) {
	newHash := Algorithms[alg]
	if newHash == nil {
		return "", 0, fmt.Errorf("%w: algorithm %q", ErrDigestSyntax, alg)
	}
	h := newHash()
	buf := hashBuffers.Get().(*[]byte)
	defer hashBuffers.Put(buf)
	n, err := io.CopyBuffer(h, r, *buf)
	if err != nil {
		return "", n, err
	}
	return alg + ":" + hex.EncodeToString(h.Sum(nil)), n, nil
}

// DigestFile hashes the regular file at path with SHA-256 and returns
// its digest and size in bytes.
func DigestFile(path string) (string, int64, error) { return DigestFileAlg(path, "sha256") }

// DigestFileAlg is DigestFile with another algorithm of Algorithms.
func DigestFileAlg(path, alg string) (string, int64, error) {
	f, err := openRegular(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	d, n, err := DigestReader(f, alg)
	if err != nil {
		return "", 0, fmt.Errorf("hashing %s: %w", path, err)
	}
	return d, n, nil
}

// Compare hashes the file at path, here, with the algorithm expected
// names, and compares the result with expected, a digest computed
// elsewhere (a pin, an instruction, a sender). It returns the digest
// computed here, and a *MismatchError (wrapping ErrDigestMismatch) when
// they differ; a malformed expected digest wraps ErrDigestSyntax. The
// digest a sender reports for the bytes it sent plays no part.
func Compare(path, expected string) (string, error) {
	alg, _, err := ParseDigest(expected)
	if err != nil {
		return "", err
	}
	actual, _, err := DigestFileAlg(path, alg)
	if err != nil {
		return "", err
	}
	if actual != expected {
		return actual, &MismatchError{Path: path, Expected: expected, Actual: actual}
	}
	return actual, nil
}
