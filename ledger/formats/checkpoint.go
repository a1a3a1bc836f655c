package formats

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Errors for checkpoints.
var (
	// ErrMalformedCheckpoint: the checkpoint text is not a well-formed,
	// canonical C2SP checkpoint.
	ErrMalformedCheckpoint = errors.New("malformed checkpoint")
	// ErrCheckpointSignature: the checkpoint is not signed by the expected
	// key, or its signature does not verify.
	ErrCheckpointSignature = errors.New("checkpoint signature does not verify")
)

// MaxCheckpointSize bounds a signed checkpoint, in bytes: the body is under
// 200 bytes and each signature line under 150.
const MaxCheckpointSize = 16 << 10

// Checkpoint is the body of a C2SP tlog-checkpoint
// (c2sp.org/tlog-checkpoint).
type Checkpoint struct {
	Origin string    // the log's origin, also the note key name
	Size   int64     // number of entries
	Hash   tlog.Hash // RFC 6962 root hash of the first Size entries
}

// Body returns the checkpoint body: origin, size and base64 root hash, each
// followed by a newline.
func (c Checkpoint) Body() string {
	return fmt.Sprintf("%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Hash[:]))
}

// MaxTreeSize bounds the tree size of a checkpoint writ reads (2^56
// entries, far beyond any log): golang.org/x/mod/sumdb/tlog's proofs do
// not terminate for sizes above 2^62, and a size the log key signed is
// still hostile input to a replica or a witness.
const MaxTreeSize = 1 << 56

// ParseCheckpoint parses a checkpoint body (c2sp.org/tlog-checkpoint)
// strictly: exactly three lines, a decimal size without sign or leading
// zeros, at most MaxTreeSize, a 32-byte root hash in standard padded
// base64, and no extension lines. The error wraps ErrMalformedCheckpoint.
func ParseCheckpoint(body string) (Checkpoint, error) {
	lines := strings.SplitAfter(body, "\n")
	if len(lines) != 4 || lines[3] != "" {
		return Checkpoint{}, fmt.Errorf("%w: want exactly 3 newline-terminated lines", ErrMalformedCheckpoint)
	}
	var c Checkpoint
	c.Origin = strings.TrimSuffix(lines[0], "\n")
	size, err := strconv.ParseInt(strings.TrimSuffix(lines[1], "\n"), 10, 64)
	if err != nil || size < 0 || size > MaxTreeSize {
		return Checkpoint{}, fmt.Errorf("%w: size line %q (a decimal from 0 to 2^56)", ErrMalformedCheckpoint, lines[1])
	}
	c.Size = size
	h, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(lines[2], "\n"))
	if err != nil || len(h) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("%w: root hash line %q", ErrMalformedCheckpoint, lines[2])
	}
	copy(c.Hash[:], h)
	if c.Origin == "" || c.Body() != body {
		return Checkpoint{}, fmt.Errorf("%w: not in canonical form", ErrMalformedCheckpoint)
	}
	return c, nil
}

// ValidOrigin reports whether s can be a log origin and note key name:
// 1 to 128 printable ASCII characters, none of them space or '+'.
func ValidOrigin(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r > '~' || r == '+' {
			return false
		}
	}
	return true
}

// OpenCheckpoint verifies a signed checkpoint (at most MaxCheckpointSize
// bytes) against the log key k (c2sp.org/signed-note) and parses its body
// (ParseCheckpoint). The note's text must be a checkpoint whose origin is
// k's key name. Errors wrap ErrCheckpointSignature or
// ErrMalformedCheckpoint.
func OpenCheckpoint(signed []byte, k *LogKey) (Checkpoint, error) {
	if len(signed) > MaxCheckpointSize {
		return Checkpoint{}, fmt.Errorf("%w: %d bytes, limit %d", ErrMalformedCheckpoint, len(signed), MaxCheckpointSize)
	}
	v := k.Verifier()
	n, err := note.Open(signed, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %w", ErrCheckpointSignature, err)
	}
	c, err := ParseCheckpoint(n.Text)
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Origin != v.Name() {
		return Checkpoint{}, fmt.Errorf("%w: origin %q is not the key name %q", ErrMalformedCheckpoint, c.Origin, v.Name())
	}
	return c, nil
}
