package witness

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/writ-ledger/writ/ledger/formats"
	"golang.org/x/mod/sumdb/tlog"
)

// Bounds of the protocol's inputs.
const (
	// MaxRequestSize bounds an add-checkpoint request body, in bytes
	// (128 KiB): the old size line, at most MaxProofLines of 45 bytes and
	// a checkpoint of MaxSubmittedCheckpoint take under 68 KiB. A larger
	// body is answered 413. It is what one request in flight makes a
	// server hold.
	MaxRequestSize = 128 << 10
	// MaxProofLines is the most consistency proof lines a request may
	// carry (c2sp.org/tlog-witness: "MUST NOT send more than 63").
	MaxProofLines = 63
	// MaxSubmittedCheckpoint bounds the checkpoint a request carries, its
	// note text and signature lines, in bytes (64 KiB; real checkpoints
	// are well under 1 KiB). A larger one is answered 400, before any
	// signature is checked, so what the witness stores always fits
	// MaxCheckpointSize.
	MaxSubmittedCheckpoint = 64 << 10
	// MaxCheckpointSize bounds the stored (and served) checkpoint of a
	// log, in bytes: a submitted checkpoint plus the witness's
	// cosignature line. ParseCheckpoint, the state loader and the
	// monitoring client accept exactly this much, so the witness never
	// stores what it would refuse to read.
	MaxCheckpointSize = MaxSubmittedCheckpoint + 1024
)

// Request is a parsed add-checkpoint request body
// (c2sp.org/tlog-witness, "add-checkpoint").
type Request struct {
	// OldSize is the tree size of the checkpoint the submitter believes
	// the witness last cosigned (0 for none).
	OldSize int64
	// Proof is the RFC 6962 §2.1.2 consistency proof from OldSize to the
	// checkpoint's size, one 32-byte hash per line (at most 63).
	Proof tlog.TreeProof
	// Checkpoint is the signed note (c2sp.org/tlog-checkpoint) exactly
	// as received, signature lines included.
	Checkpoint []byte
}

// ParseRequest parses an add-checkpoint request body strictly: the line
// "old <size>" (ASCII decimal, no sign, no leading zeros unless the size
// is 0, at most 2^56 (formats.MaxTreeSize)), 0 to 63 lines of standard padded base64 each
// encoding exactly 32 bytes, an empty line, then the checkpoint (the
// rest of the body, non-empty and ending in a newline). Every line ends
// in "\n" (no "\r"). The body must be at most MaxRequestSize bytes. The
// checkpoint is not parsed here (see ParseCheckpoint). Errors wrap
// ErrBadRequest.
func ParseRequest(body []byte) (*Request, error) {
	if len(body) > MaxRequestSize {
		return nil, refuse(ErrBadRequest, fmt.Sprintf("request body larger than %d bytes", MaxRequestSize))
	}
	line, rest, ok := bytes.Cut(body, []byte("\n"))
	if !ok {
		return nil, refuse(ErrBadRequest, "malformed request: no old size line")
	}
	num, ok := bytes.CutPrefix(line, []byte("old "))
	if !ok {
		return nil, refuse(ErrBadRequest, "malformed request: the first line is not \"old <size>\"")
	}
	old, ok := parseSize(string(num))
	if !ok {
		return nil, refuse(ErrBadRequest, "malformed request: the old size is not a decimal without leading zeros up to 2^56")
	}
	r := &Request{OldSize: old}
	for {
		line, rest, ok = bytes.Cut(rest, []byte("\n"))
		if !ok {
			return nil, refuse(ErrBadRequest, "malformed request: no empty line before the checkpoint")
		}
		if len(line) == 0 {
			break
		}
		if len(r.Proof) == MaxProofLines {
			return nil, refuse(ErrBadRequest, "malformed request: more than 63 consistency proof lines")
		}
		h, ok := parseHash(string(line))
		if !ok {
			return nil, refuse(ErrBadRequest, "malformed request: a proof line is not the base64 of a 32-byte hash")
		}
		r.Proof = append(r.Proof, h)
	}
	if len(rest) == 0 || rest[len(rest)-1] != '\n' {
		return nil, refuse(ErrBadRequest, "malformed request: no checkpoint after the empty line, or it does not end in a newline")
	}
	r.Checkpoint = rest
	return r, nil
}

// MarshalRequest returns the add-checkpoint request body for old, proof
// and the signed checkpoint: "old <old>\n", one base64 line per proof
// hash, "\n", then signed. The result parses back with ParseRequest to
// the same values. Errors wrap ErrBadRequest: old negative, more than 63
// proof hashes, signed empty or not ending in a newline, or a body over
// MaxRequestSize bytes.
func MarshalRequest(old int64, proof tlog.TreeProof, signed []byte) ([]byte, error) {
	switch {
	case old < 0:
		return nil, refuse(ErrBadRequest, fmt.Sprintf("old size %d is negative", old))
	case len(proof) > MaxProofLines:
		return nil, refuse(ErrBadRequest, fmt.Sprintf("%d consistency proof hashes, at most %d may be sent", len(proof), MaxProofLines))
	case len(signed) == 0 || signed[len(signed)-1] != '\n':
		return nil, refuse(ErrBadRequest, "the checkpoint is empty or does not end in a newline")
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", old)
	for _, h := range proof {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.Write(signed)
	if b.Len() > MaxRequestSize {
		return nil, refuse(ErrBadRequest, fmt.Sprintf("request body of %d bytes, at most %d", b.Len(), MaxRequestSize))
	}
	return b.Bytes(), nil
}

// Checkpoint is the text of a C2SP tlog-checkpoint
// (c2sp.org/tlog-checkpoint, "Note text") as a witness reads it: any log's
// checkpoint, extension lines allowed.
type Checkpoint struct {
	Origin string    // first line: the log's origin
	Size   int64     // second line: the number of leaves
	Hash   tlog.Hash // third line: the RFC 6962 root hash
	// Text is the whole note text, extension lines and the final newline
	// included: what signatures and cosignatures sign.
	Text string
}

// ParseCheckpoint reads the note text of a signed checkpoint (the bytes
// before the last blank line, as c2sp.org/signed-note splits a note):
// a non-empty origin line, a size line (ASCII decimal, no leading zeros
// unless 0, at most 2^56 (formats.MaxTreeSize)), a root hash line (standard padded base64 of
// exactly 32 bytes), then any non-empty extension lines. It verifies no
// signature (note.Open does). Unlike formats.ParseCheckpoint, which reads
// only checkpoints writ wrote, it accepts extension lines, as
// tlog-cosignature requires a cosigner to sign them. The signed note must
// be at most MaxCheckpointSize bytes. Errors wrap ErrBadRequest.
func ParseCheckpoint(signed []byte) (Checkpoint, error) {
	if len(signed) > MaxCheckpointSize {
		return Checkpoint{}, refuse(ErrBadRequest, fmt.Sprintf("checkpoint larger than %d bytes", MaxCheckpointSize))
	}
	split := bytes.LastIndex(signed, []byte("\n\n"))
	if split < 0 {
		return Checkpoint{}, refuse(ErrBadRequest, "malformed checkpoint: no blank line before the signatures")
	}
	text := string(signed[:split+1])
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return Checkpoint{}, refuse(ErrBadRequest, "malformed checkpoint: fewer than 3 lines (origin, size, root hash)")
	}
	for _, l := range lines {
		if l == "" {
			return Checkpoint{}, refuse(ErrBadRequest, "malformed checkpoint: an empty line in the note text")
		}
	}
	c := Checkpoint{Origin: lines[0], Text: text}
	var ok bool
	if c.Size, ok = parseSize(lines[1]); !ok {
		return Checkpoint{}, refuse(ErrBadRequest, "malformed checkpoint: the size line is not a decimal without leading zeros up to 2^56")
	}
	if c.Hash, ok = parseHash(lines[2]); !ok {
		return Checkpoint{}, refuse(ErrBadRequest, "malformed checkpoint: the root hash line is not the base64 of 32 bytes")
	}
	return c, nil
}

// parseSize parses a tree size: ASCII decimal digits, no leading zero
// unless the size is 0, at most 2^56 (formats.MaxTreeSize).
func parseSize(s string) (int64, bool) {
	if s == "" || len(s) > 19 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n <= formats.MaxTreeSize
}

// parseHash decodes the standard, padded, canonical base64 of exactly
// 32 bytes.
func parseHash(s string) (tlog.Hash, bool) {
	var h tlog.Hash
	if len(s) != 44 || strings.ContainsAny(s, "\r\n") {
		return h, false // base64 decoding would skip '\r' and '\n'
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != tlog.HashSize {
		return h, false
	}
	copy(h[:], b)
	return h, true
}
