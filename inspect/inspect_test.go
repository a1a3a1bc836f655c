package inspect_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/inspect"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// field returns the value of the named field of d's record.
func field(t *testing.T, d *inspect.Description, name string) inspect.Field {
	t.Helper()
	for _, f := range d.Record.Fields {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no field %q in %+v", name, d.Record.Fields)
	return inspect.Field{}
}

// TestDescribeRecords: each kind of signed record is named, its signers
// listed by key id, a raw key shown as its key id, times in both forms.
func TestDescribeRecords(t *testing.T) {
	root, op := testkit.Key(t, 1), testkit.Key(t, 2)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		data     []byte
		kind     schemas.Kind
		envelope string
		signers  int
		field    string
		want     string
	}{
		{"root", testkit.Seal(t, testkit.Root(1, root), root), schemas.KindRoot, "COSE_Sign1", 1, "keys[0]", "key " + root.Public().ID()},
		{"delegation", testkit.Seal(t, testkit.Delegation(op, []string{"instruct"}, "demo", "runner-*"), root), schemas.KindDelegation, "COSE_Sign1", 1, "key", "key " + op.Public().ID()},
		{"two signers", testkit.Seal(t, testkit.Delegation(op, []string{"pin"}, "", ""), root, op), schemas.KindDelegation, "COSE_Sign", 2, "artifacts", "agent"},
		{"pin", testkit.Seal(t, testkit.Pin("linux/amd64", "sha256:"+strings.Repeat("ab", 32), 7), op), schemas.KindPin, "COSE_Sign1", 1, "digest", "sha256:" + strings.Repeat("ab", 32)},
		{"instruction", testkit.Seal(t, testkit.Instruction(strings.Repeat("0a", 16)), op), schemas.KindInstruction, "COSE_Sign1", 1, "agent.name", "agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := inspect.Describe(tc.data, berlin)
			if err != nil {
				t.Fatal(err)
			}
			if d.Format != inspect.FormatRecord || d.Record.Kind != tc.kind || d.Record.Envelope != tc.envelope || len(d.Record.Signers) != tc.signers || d.Verified {
				t.Fatalf("got %s %s %s, %d signers, verified %v", d.Format, d.Record.Kind, d.Record.Envelope, len(d.Record.Signers), d.Verified)
			}
			if d.Digest != schemas.SHA256Digest(tc.data) || d.Bytes != int64(len(tc.data)) {
				t.Errorf("digest %s, %d bytes", d.Digest, d.Bytes)
			}
			if f := field(t, d, tc.field); f.Value != tc.want {
				t.Errorf("%s = %q, want %q", tc.field, f.Value, tc.want)
			}
			at := field(t, d, "issued_at").Time
			if at == nil || at.UTC != time.Unix(at.Unix, 0).UTC().Format(time.RFC3339) || !strings.HasSuffix(at.Local, "+01:00") {
				t.Errorf("issued_at time %+v", at)
			}
			if d.Zone != "CET" || !strings.Contains(strings.Join(d.Lines(), "\n"), "(local ") {
				t.Errorf("zone %q, lines %q", d.Zone, d.Lines())
			}
		})
	}
}

// TestDescribeOthers: receipts, checkpoints, keys, unsigned
// instructions, and the files inspect refuses, each with its sentinel.
func TestDescribeOthers(t *testing.T) {
	k := testkit.Key(t, 3)
	signer, vkeyText, err := formats.NewNoteSigner("example.com/log", k)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := note.Sign(&note.Note{Text: formats.Checkpoint{Origin: "example.com/log", Size: 3, Hash: tlog.Hash{1}}.Body()}, signer)
	if err != nil {
		t.Fatal(err)
	}
	receipt, err := formats.SignReceiptWith(&formats.InclusionProof{Index: 1, TreeSize: 3, RootHash: tlog.Hash{1}, Path: []tlog.Hash{{2}, {3}}}, "example.com/log", k, cp)
	if err != nil {
		t.Fatal(err)
	}
	unsigned, err := schemas.Encode(testkit.Instruction(strings.Repeat("0b", 16)))
	if err != nil {
		t.Fatal(err)
	}
	elf := append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 100)...)
	for _, tc := range []struct {
		name, format string
		data         []byte
		err          error
	}{
		{"checkpoint", inspect.FormatCheckpoint, cp, nil},
		{"receipt", inspect.FormatReceipt, receipt, nil},
		{"public key", inspect.FormatPublicKey, k.Public().PEM(), nil},
		{"log key", inspect.FormatLogKey, []byte(vkeyText + "\n"), nil},
		{"unsigned", inspect.FormatUnsigned, unsigned, nil},
		{"private key", inspect.FormatPrivateKey, []byte("-----BEGIN AGE ENCRYPTED FILE-----\nYWdl\n-----END AGE ENCRYPTED FILE-----\n"), nil},
		{"executable", "", elf, inspect.ErrUnknownFormat},
		{"passphrase", "", []byte("hunter2-correct-horse\n"), inspect.ErrUnknownFormat},
		{"empty", "", nil, inspect.ErrUnknownFormat},
		{"cut envelope", "", testkit.Seal(t, testkit.Instruction(strings.Repeat("0c", 16)), k)[:40], inspect.ErrMalformed},
		{"bad checkpoint", "", []byte("example.com/log\nthree\nAAAA\n\n\u2014 example.com/log AAAAAAAA\n"), inspect.ErrMalformed},
		{"too large", "", make([]byte, inspect.MaxInspect+1), inspect.ErrUnknownFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := inspect.Describe(tc.data, time.UTC)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if err != nil {
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("the error prints the file's text: %v", err)
				}
				return
			}
			if d.Format != tc.format || d.VerifyWith == "" || len(d.Lines()) < 3 {
				t.Fatalf("format %q (verify with %q), lines %q", d.Format, d.VerifyWith, d.Lines())
			}
		})
	}
	d, _ := inspect.Describe(receipt, time.UTC)
	if r := d.Receipt; r.Index != 1 || r.TreeSize != 3 || r.PathHashes != 2 || r.Origin != "example.com/log" || r.KeyID != k.Public().ID() || r.Carried == nil || r.Carried.Size != 3 {
		t.Errorf("receipt %+v", r)
	}
	d, _ = inspect.Describe(cp, time.UTC)
	if c := d.Checkpoint; c.Origin != "example.com/log" || c.Size != 3 || len(c.Lines) != 1 || c.Lines[0].Cosigned != nil {
		t.Errorf("checkpoint %+v", c)
	}
}

// TestDescribeInvalidRecord: a signed record that breaks a field rule is
// described, with the rule, and never as valid.
func TestDescribeInvalidRecord(t *testing.T) {
	k := testkit.Key(t, 4)
	bad := testkit.Instruction(strings.Repeat("0d", 16))
	bad.Machine = "runner 1\x1b[2J"
	payload, err := schemas.Marshal(bad)
	if err != nil {
		t.Fatal(err)
	}
	env, err := sign.Sign(schemas.KindInstruction, payload, k)
	if err != nil {
		t.Fatal(err)
	}
	d, err := inspect.Describe(env, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Record.Invalid, "instruction.machine") {
		t.Errorf("invalid %q", d.Record.Invalid)
	}
	text := strings.Join(d.Lines(), "\n")
	if !strings.Contains(text, `"runner 1\x1b[2J"`) || strings.Contains(text, "\x1b") {
		t.Errorf("the machine is not quoted safely:\n%s", text)
	}
	if !bytes.Contains([]byte(text), []byte("INVALID:")) {
		t.Errorf("no INVALID line:\n%s", text)
	}
}

// TestHostileMapKey: a map key from a record (a decision's high_water)
// never reaches the terminal raw: a hostile review put an escape
// sequence there, and inspect printed it as the field's name.
func TestHostileMapKey(t *testing.T) {
	d := &schemas.Decision{V: 1, Time: 1, Machine: "m", Mode: "off", Verdict: schemas.VerdictRefused, Rule: "malformed-dispatch",
		InstructionDigest: "sha256:" + strings.Repeat("ab", 32), HighWater: map[string]string{"\x1b]0;PWNED\x07\x1b[2J": "v1.0.0"}}
	data, err := schemas.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := inspect.Describe(data, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(desc.Lines(), "\n")
	if strings.ContainsAny(text, "\x1b\x07") || !strings.Contains(text, `high_water["\x1b]0;PWNED\a\x1b[2J"]`) {
		t.Errorf("the key is not quoted:\n%s", text)
	}
}
