package inspect

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// cosignatureBytes is a c2sp.org/tlog-cosignature signature: an 8-byte
// timestamp and an Ed25519 signature.
const cosignatureBytes = 8 + 64

// text reads the formats that are not CBOR envelopes: a signed
// checkpoint, a log verifier key, an unsigned instruction.
func (d *Description) text(data []byte, loc *time.Location) error {
	switch {
	case bytes.Contains(data, []byte("\n\n"+formats.SigLinePrefix)):
		cp, err := describeCheckpoint(data, loc)
		if err != nil {
			return fmt.Errorf("%w: a signed note that is not a checkpoint: %w", ErrMalformed, err)
		}
		d.Format, d.VerifyWith, d.Checkpoint = FormatCheckpoint, "writ ledger checkpoint --dir DIR (its own log), or a witness policy (--policy)", cp
		return nil
	case isLogKey(data):
		k, err := formats.ParseLogKey(strings.TrimSuffix(string(data), "\n"))
		if err != nil {
			if wk := witnessKey(strings.TrimSuffix(string(data), "\n")); wk != nil {
				d.Format, d.VerifyWith, d.Key = FormatWitnessKey, "a witness policy's witness line names it (C2SP tlog-policy)", wk
				return nil
			}
			return fmt.Errorf("%w: a log verifier key: %w", ErrMalformed, err)
		}
		d.Format, d.VerifyWith = FormatLogKey, "writ ledger vkey --dir DIR (prints the key a ledger stores)"
		d.Key = &Key{Kind: "a signed-note verifier key (Ed25519) of a log's checkpoints", KeyID: k.PublicKey().ID(), Origin: k.Name()}
		return nil
	}
	if rec, err := newRecord(schemas.KindInstruction, data, loc); err == nil {
		d.Format, d.VerifyWith, d.Record = FormatUnsigned, "none: it has no signature (writ admit counts it as unsigned)", rec
		rec.Signers = []Signer{}
		return nil
	}
	if rec, err := newRecord(schemas.KindDecision, data, loc); err == nil {
		d.Format, d.VerifyWith, d.Record = FormatDecision, "writ ledger verify --dir DIR (the decision log's signed checkpoints cover it)", rec
		rec.Signers = []Signer{}
		return nil
	}
	return fmt.Errorf("%w: it looks like %s", ErrUnknownFormat, sign.Describe(data[:min(len(data), 64)]))
}

// isLogKey reports whether data is one line of "name+hash+base64".
func isLogKey(data []byte) bool {
	s := strings.TrimSuffix(string(data), "\n")
	return s != "" && !strings.ContainsAny(s, "\n ") && strings.Count(s, "+") >= 2 && len(s) < 512
}

// describeCheckpoint reads a signed checkpoint note: its body and each
// signature line (c2sp.org/signed-note), a cosignature with its time.
func describeCheckpoint(data []byte, loc *time.Location) (*Checkpoint, error) {
	if len(data) > formats.MaxCheckpointSize {
		return nil, fmt.Errorf("larger than %d bytes", formats.MaxCheckpointSize)
	}
	body, sigs, ok := strings.Cut(string(data), "\n\n")
	if !ok {
		return nil, fmt.Errorf("no blank line before the signatures")
	}
	c, err := formats.ParseCheckpoint(body + "\n")
	if err != nil {
		return nil, err
	}
	cp := &Checkpoint{Origin: c.Origin, Size: c.Size, Root: strings.Split(body, "\n")[2], Lines: []SigLine{}}
	for _, line := range strings.Split(strings.TrimSuffix(sigs, "\n"), "\n") {
		sl, err := formats.ParseSigLine(line)
		if err != nil {
			return nil, err
		}
		s := SigLine{Name: sl.Name, Hash: hex.EncodeToString(binary.BigEndian.AppendUint32(nil, sl.Hash))}
		if len(sl.Sig) == cosignatureBytes {
			at := time.Unix(int64(binary.BigEndian.Uint64(sl.Sig[:8])), 0)
			s.Cosigned = &Time{Unix: at.Unix(), UTC: at.UTC().Format(time.RFC3339), Local: at.In(loc).Format(time.RFC3339)}
		}
		cp.Lines = append(cp.Lines, s)
	}
	return cp, nil
}

// witnessKey reads a witness's cosignature verifier key
// (c2sp.org/tlog-cosignature: "name+hash+base64(0x04 || Ed25519 key)"),
// nil when vkey is not one.
func witnessKey(vkey string) *Key {
	name, rest, ok := strings.Cut(vkey, "+")
	_, b64, ok2 := strings.Cut(rest, "+")
	raw, err := base64.StdEncoding.DecodeString(b64)
	if !ok || !ok2 || err != nil || len(raw) != 33 || raw[0] != 0x04 || !formats.ValidKeyName(name) {
		return nil
	}
	k, err := sign.NewPublicKey(raw[1:])
	if err != nil {
		return nil
	}
	return &Key{Kind: "a witness's cosignature verifier key (c2sp.org/tlog-cosignature, Ed25519)", KeyID: k.ID(), Origin: name}
}
