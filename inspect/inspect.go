package inspect

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// ErrUnknownFormat: the bytes are none of the formats inspect reads. The
// error says what they look like instead (sign.Describe), never the
// bytes themselves.
var ErrUnknownFormat = errors.New("not a file writ reads")

// ErrMalformed wraps the parse error of a file that starts as one of the
// formats inspect reads (a COSE envelope, a receipt, a checkpoint, an
// export) but does not parse as it.
var ErrMalformed = errors.New("malformed")

// MaxInspect is the most bytes Describe reads, the bound of every format
// it reads whole (a record, a receipt: schemas.MaxRecordSize; a
// checkpoint: formats.MaxCheckpointSize). An export is larger: only its
// header is read from its first MaxInspect bytes.
const MaxInspect = schemas.MaxRecordSize

// The formats of Description.Format.
const (
	FormatRecord     = "record"      // a signed writ record (COSE_Sign1 or COSE_Sign)
	FormatUnsigned   = "unsigned"    // a bare CBOR instruction (writ instruct --unsigned)
	FormatDecision   = "decision"    // a decision log entry: a bare CBOR decision record
	FormatReceipt    = "receipt"     // an RFC 9942 COSE receipt
	FormatCheckpoint = "checkpoint"  // a signed checkpoint note
	FormatExport     = "export"      // a ledger export's header
	FormatPublicKey  = "public-key"  // an Ed25519 public key (PEM PKIX)
	FormatLogKey     = "log-key"     // a signed-note verifier key
	FormatWitnessKey = "witness-key" // a witness's cosignature verifier key
	FormatPrivateKey = "private-key" // a writ private key file (age), not read
)

// Description is one file, as inspect reads it. Exactly one of Record,
// Receipt, Checkpoint, Export and Key is set, as Format says. Its JSON is
// writ inspect's result.
type Description struct {
	Format   string `json:"format" doc:"record, unsigned, decision, receipt, checkpoint, export, public-key, log-key, witness-key or private-key"`
	Bytes    int64  `json:"bytes" doc:"the bytes read (for an export, at most the header's)"`
	Digest   string `json:"digest" doc:"sha256:<hex> of the bytes read: a record's digest, as the ledger names it"`
	Verified bool   `json:"verified" doc:"always false: inspect parses, it does not verify"`
	// VerifyWith names the command that verifies this format.
	VerifyWith string      `json:"verify_with" doc:"the writ command that verifies it"`
	Record     *Record     `json:"record,omitempty" doc:"a record, signed or not"`
	Receipt    *Receipt    `json:"receipt,omitempty" doc:"a receipt"`
	Checkpoint *Checkpoint `json:"checkpoint,omitempty" doc:"a checkpoint"`
	Export     *Export     `json:"export,omitempty" doc:"an export's header"`
	Key        *Key        `json:"key,omitempty" doc:"a key file"`
	// Zone is the local time zone of every Time's Local.
	Zone string `json:"zone" doc:"the local time zone the local times are in"`
}

// Describe reads data (at most MaxInspect bytes, or the start of an
// export) and says what it is, at time zone loc (nil: time.Local).
// Errors: ErrUnknownFormat (with what the bytes look like); an error
// wrapping ErrMalformed for bytes that start as a format but do not parse
// as it (a record that breaks a field rule is described, with the rule in
// Record.Invalid).
func Describe(data []byte, loc *time.Location) (*Description, error) {
	if loc == nil {
		loc = time.Local
	}
	zone, _ := time.Now().In(loc).Zone()
	d := &Description{Bytes: int64(len(data)), Digest: schemas.SHA256Digest(data), Zone: zone}
	var err error
	switch {
	case isExport(data):
		err = d.export(data)
	case len(data) > MaxInspect:
		return nil, fmt.Errorf("%w: larger than %d bytes and not a ledger export", ErrUnknownFormat, MaxInspect)
	case sign.IsEnvelope(data):
		err = d.envelope(data, loc)
	case bytes.HasPrefix(data, []byte("-----BEGIN PUBLIC KEY-----")):
		err = d.publicKey(data)
	case bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("-----BEGIN AGE ENCRYPTED FILE-----")):
		d.Format, d.VerifyWith = FormatPrivateKey, "none: writ opens it only to sign, with its passphrase"
		d.Key = &Key{Kind: "a writ private key file, encrypted with age (its key is not read)"}
	default:
		err = d.text(data, loc)
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// isExport reports whether data starts as a ledger export's header does
// (a CBOR map whose first key is "format" with the export's value).
func isExport(data []byte) bool {
	head := data[:min(len(data), 64)]
	return bytes.Contains(head, []byte("writ-ledger-export"))
}

// export reads an export's header and its first section's header.
func (d *Description) export(data []byte) error {
	x, err := replica.NewExportReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	l, err := x.Next()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	d.Format, d.VerifyWith = FormatExport, "writ ledger import --dir NEW FILE (verifies every entry against its checkpoint)"
	d.Export = &Export{Logs: x.Logs(), First: Section{Name: l.Name, Origin: l.Origin, VKey: l.VKey, Size: l.Size, Checkpoint: l.Checkpoint}}
	return nil
}

// envelope reads a COSE envelope: a writ record, else a receipt.
func (d *Description) envelope(data []byte, loc *time.Location) error {
	env, err := sign.ParseEnvelope(data)
	if err == nil {
		d.Format, d.VerifyWith = FormatRecord, "writ ledger append (signatures and authority), or writ verify --key PUB (one signature)"
		d.Record, err = newRecord(env.Kind, env.Payload, loc)
		if err != nil {
			return err
		}
		d.Record.Envelope = "COSE_Sign1"
		if len(env.Signatures) > 1 {
			d.Record.Envelope = "COSE_Sign"
		}
		for _, s := range env.Signatures {
			d.Record.Signers = append(d.Record.Signers, Signer{KeyID: s.KeyID, Alg: int64(s.Alg)})
		}
		return nil
	}
	info, rerr := formats.DescribeReceipt(data)
	if rerr != nil {
		return fmt.Errorf("%w: a COSE message that is neither a writ record (%w) nor a receipt (%w)", ErrMalformed, err, rerr)
	}
	d.Format, d.VerifyWith = FormatReceipt, "writ ledger verify-receipt --vkey KEY --entry ENTRY FILE"
	d.Receipt = &Receipt{ReceiptInfo: *info}
	if info.Checkpoint != "" {
		cp, err := describeCheckpoint([]byte(info.Checkpoint), loc)
		if err != nil {
			return fmt.Errorf("%w: the receipt's checkpoint: %w", ErrMalformed, err)
		}
		d.Receipt.Carried = cp
	}
	return nil
}

// publicKey reads an Ed25519 public key in PEM.
func (d *Description) publicKey(data []byte) error {
	k, err := sign.ParsePublicKeyPEM(data)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	d.Format, d.VerifyWith = FormatPublicKey, "writ key id FILE (prints the same key id)"
	d.Key = &Key{Kind: "an Ed25519 public key (PEM PKIX)", KeyID: k.ID()}
	return nil
}
