package formats

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// MaxSignatureLines bounds the signature lines writ keeps on one
// checkpoint: the log's two and the witnesses' cosignatures
// (MaxPolicyWitnesses of them), each once.
const MaxSignatureLines = 2 + MaxPolicyWitnesses

// ErrSignatureLines: signature lines (c2sp.org/signed-note) that are
// malformed: not "— <name> <base64 of key id || signature>\n", a name
// that is not a key name, or too many.
var ErrSignatureLines = errors.New("malformed signature lines")

// SignatureLines parses a block of signed-note signature lines (each
// "— <key name> <base64>" ending in a newline, as a tlog-witness
// add-checkpoint answers, c2sp.org/tlog-witness) and returns them without
// duplicates, in order, each with its newline. It refuses an empty block
// and more than MaxSignatureLines lines. Errors wrap ErrSignatureLines.
func SignatureLines(block []byte) ([]string, error) {
	if len(block) == 0 || block[len(block)-1] != '\n' {
		return nil, fmt.Errorf("%w: empty or not newline-terminated", ErrSignatureLines)
	}
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.SplitAfter(string(block[:len(block)-1]), "\n") {
		line = strings.TrimSuffix(line, "\n")
		if _, err := parseStoredSigLine(line); err != nil {
			return nil, err
		}
		if !seen[line] {
			seen[line] = true
			out = append(out, line+"\n")
		}
		if len(out) > MaxSignatureLines {
			return nil, fmt.Errorf("%w: more than %d", ErrSignatureLines, MaxSignatureLines)
		}
	}
	return out, nil
}

// parseStoredSigLine parses a signature line writ keeps on a checkpoint
// (ParseSigLine), whose key name must also be printable ASCII, as an
// origin is (ValidOrigin).
func parseStoredSigLine(line string) (SigLine, error) {
	sl, err := ParseSigLine(line)
	if err == nil && !ValidOrigin(sl.Name) {
		return SigLine{}, fmt.Errorf("%w: %.80q is not a signature line (\"\u2014 <key name> <base64>\") with a printable ASCII key name", ErrSignatureLines, line)
	}
	return sl, err
}

// AddSignatures returns signed (a signed note) with the signature lines
// of lines attached: how a log attaches the cosignatures witnesses
// returned to its checkpoint. A new line replaces a line already there by
// the same key name and key id (a witness's newer cosignature replaces
// its older one); an identical line is kept once. The result is at most
// MaxCheckpointSize bytes and MaxSignatureLines lines. Errors wrap
// ErrSignatureLines or ErrMalformedCheckpoint.
func AddSignatures(signed []byte, lines []string) ([]byte, error) {
	body, sigs, ok := bytes.Cut(signed, []byte("\n\n"))
	if !ok {
		return nil, fmt.Errorf("%w: no signature block", ErrMalformedCheckpoint)
	}
	have, err := SignatureLines(sigs)
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		sl, err := parseStoredSigLine(strings.TrimSuffix(l, "\n"))
		if !strings.HasSuffix(l, "\n") || err != nil {
			return nil, fmt.Errorf("%w: %.80q", ErrSignatureLines, l)
		}
		replaced := false
		for i, h := range have {
			if hl, _ := ParseSigLine(strings.TrimSuffix(h, "\n")); hl.Name == sl.Name && hl.Hash == sl.Hash {
				have[i], replaced = l, true
				break
			}
		}
		if !replaced {
			have = append(have, l)
		}
	}
	if len(have) > MaxSignatureLines {
		return nil, fmt.Errorf("%w: more than %d", ErrSignatureLines, MaxSignatureLines)
	}
	out := append(bytes.Clone(body), "\n\n"...)
	for _, l := range have {
		out = append(out, l...)
	}
	if len(out) > MaxCheckpointSize {
		return nil, fmt.Errorf("%w: %d bytes with cosignatures, limit %d", ErrMalformedCheckpoint, len(out), MaxCheckpointSize)
	}
	return out, nil
}

// LogSigned returns the part of a signed checkpoint that the log itself
// signed: its body and only the signature lines by the log key k (its
// signed-note line and its cosignature/v1 line, matched by name and key
// id), in order. Witness cosignatures are left out: what remains is the
// canonical checkpoint writ stores in a log's history. Errors wrap
// ErrMalformedCheckpoint or ErrSignatureLines.
func LogSigned(signed []byte, k *LogKey) ([]byte, error) {
	v := k.Verifier()
	ids := map[uint32]bool{v.KeyHash(): true, k.Cosig().KeyID(): true}
	body, sigs, ok := bytes.Cut(signed, []byte("\n\n"))
	if !ok {
		return nil, fmt.Errorf("%w: no signature block", ErrMalformedCheckpoint)
	}
	lines, err := SignatureLines(sigs)
	if err != nil {
		return nil, err
	}
	out := append(bytes.Clone(body), "\n\n"...)
	for _, l := range lines {
		if sl, _ := ParseSigLine(strings.TrimSuffix(l, "\n")); sl.Name == v.Name() && ids[sl.Hash] {
			out = append(out, l...)
		}
	}
	return out, nil
}
