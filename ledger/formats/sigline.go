package formats

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SigLinePrefix begins every signature line of a signed note
// (c2sp.org/signed-note): an em dash (U+2014) and a space. The signature
// block of a note is the lines after its first blank line.
const SigLinePrefix = "\u2014 "

// MaxSigLine bounds one signature line, in bytes, without its newline:
// an ML-DSA-44 cosignature (4 + 8 + 2420 bytes in base64, about 3.3 kB)
// with its name fits, with room to spare. Ed25519 lines are under 150.
const MaxSigLine = 8 << 10

// A SigLine is one signature line of a signed note
// (c2sp.org/signed-note), as golang.org/x/mod/sumdb/note's Signature
// holds it, decoded:
//
//	— <name> <base64(key hash || signature)>
//
// The key hash is the first four bytes, big-endian; the signature the
// rest (for a c2sp.org/tlog-cosignature cosignature/v1, an 8-byte
// timestamp and an Ed25519 signature).
type SigLine struct {
	Name string // the key name
	Hash uint32 // the key hash (key id)
	Sig  []byte // the signature bytes after the key hash, at least one
}

// ParseSigLine parses one signature line, given without its newline.
// It is strict: the line is at most MaxSigLine bytes; it begins with
// SigLinePrefix; the key name (ValidKeyName) is followed by one space and
// the standard, padded base64 of at least five bytes, spelled exactly as
// base64 encodes them (decoding and re-encoding give the same text: no
// line break, carriage return or other padding bits inside). Errors wrap
// ErrSignatureLines.
func ParseSigLine(line string) (SigLine, error) {
	if len(line) > MaxSigLine {
		return SigLine{}, fmt.Errorf("%w: a signature line of %d bytes, at most %d", ErrSignatureLines, len(line), MaxSigLine)
	}
	rest, ok := strings.CutPrefix(line, SigLinePrefix)
	name, b64, ok2 := strings.Cut(rest, " ")
	if !ok || !ok2 || !ValidKeyName(name) {
		return SigLine{}, fmt.Errorf("%w: %.80q is not a signature line (\"\u2014 <key name> <base64>\")", ErrSignatureLines, line)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(b64)
	if err != nil || len(raw) < 5 || base64.StdEncoding.EncodeToString(raw) != b64 {
		return SigLine{}, fmt.Errorf("%w: the signature of %.80q is not the base64 of a key id and a signature", ErrSignatureLines, name)
	}
	return SigLine{Name: name, Hash: binary.BigEndian.Uint32(raw), Sig: raw[4:]}, nil
}

// String returns the line as it is written, without its newline: the
// inverse of ParseSigLine.
func (s SigLine) String() string {
	return SigLinePrefix + s.Name + " " + s.Base64()
}

// Base64 returns the line's last field, the base64 of the key hash and
// the signature: golang.org/x/mod/sumdb/note's Signature.Base64.
func (s SigLine) Base64() string {
	raw := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(s.Sig)), s.Hash)
	return base64.StdEncoding.EncodeToString(append(raw, s.Sig...))
}

// ValidKeyName reports whether s can be a signed-note key name: not
// empty, valid UTF-8, no '+', and no space or control character
// (golang.org/x/mod/sumdb/note allows control characters; writ does not).
func ValidKeyName(s string) bool {
	return s != "" && utf8.ValidString(s) && !strings.Contains(s, "+") &&
		strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) < 0
}
