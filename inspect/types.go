package inspect

import (
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/schemas"
)

// Record is a writ record, signed or not.
type Record struct {
	Kind schemas.Kind `json:"kind" doc:"the record kind (root, delegation, pin, instruction, decision, revocation, issuer, quarantine, downgrade)"`
	// Envelope is "COSE_Sign1", "COSE_Sign" or "" (unsigned).
	Envelope string   `json:"envelope" doc:"COSE_Sign1, COSE_Sign, or empty for an unsigned instruction"`
	Signers  []Signer `json:"signers" doc:"each signature's key id and algorithm, and with --ledger the authority it acts under"`
	// Fields lists every field present, in the record's order, nested
	// fields by dotted name (agent.digest, builders[0].id).
	Fields []Field `json:"fields" doc:"every field present, in order: name, value as text, and for a time its UTC and local forms"`
	// Invalid is the field rule the record breaks (schemas.FieldError),
	// "" when none: a record that breaks one is still described.
	Invalid string `json:"invalid,omitempty" doc:"the field rule the record breaks, when it breaks one (writ refuses it)"`

	// Ledger is, with a ledger, whether ledger append would accept the
	// record now (nil without one).
	Ledger *LedgerVerdict `json:"ledger,omitempty" doc:"with --ledger: whether ledger append would accept it now, else the rule and why"`

	rec schemas.Record // the decoded record
}

// LedgerVerdict is what a ledger would make of a record appended now.
type LedgerVerdict struct {
	Accepted bool   `json:"accepted" doc:"whether ledger append would accept it now"`
	Rule     string `json:"rule,omitempty" doc:"when not: the rule it would be refused under"`
	Reason   string `json:"reason,omitempty" doc:"when not: why"`
	// Entry is set when the record is that entry of the ledger (writ
	// ledger entry --inspect): accepted when it was appended.
	Entry *int64 `json:"entry,omitempty" doc:"when it is an entry of the ledger: its index (accepted when appended)"`
}

// Signer is one signature of a record.
type Signer struct {
	KeyID string `json:"key_id" doc:"the signing key's id (64 hex), from the protected kid"`
	Alg   int64  `json:"alg" doc:"the COSE algorithm (-8 EdDSA, -19 Ed25519)"`
	// Authority is, with a ledger, the answer to "may this key do this
	// record's act now?" (Authority); nil without one.
	Authority *delegation.Explanation `json:"authority,omitempty" doc:"with --ledger: may this key do this record's act now, and under which delegation chain (authority explain's result)"`
	// RootKey, with a ledger, says the key is a key of a root of the
	// ledger ("" otherwise): root-signed acts are counted toward its
	// threshold, not authorized by a delegation.
	RootKey string `json:"root_key,omitempty" doc:"with --ledger: the key is a key of this root (version and ledger index), which signs toward its threshold"`
}

// Field is one field of a record.
type Field struct {
	Name  string `json:"name" doc:"the field's name (its CBOR key), dotted when nested"`
	Value string `json:"value" doc:"its value as text: a raw key as its key id, other bytes as their size and digest"`
	// Time is set for a time field (seconds since the Unix epoch).
	Time *Time `json:"time,omitempty" doc:"for a time field: unix seconds, UTC and local"`
}

// Time is an instant in the three forms an operator reads.
type Time struct {
	Unix  int64  `json:"unix" doc:"seconds since the Unix epoch"`
	UTC   string `json:"utc" doc:"RFC 3339, UTC"`
	Local string `json:"local" doc:"RFC 3339, in the local time zone"`
}

// Receipt is a receipt's statements, with the checkpoint it carries.
type Receipt struct {
	formats.ReceiptInfo
	Carried *Checkpoint `json:"carried,omitempty" doc:"the checkpoint it carries, read"`
}

// Checkpoint is a signed checkpoint: its body and signature lines.
type Checkpoint struct {
	Origin string    `json:"origin" doc:"the log origin"`
	Size   int64     `json:"size" doc:"the tree size, in entries"`
	Root   string    `json:"root" doc:"the root hash, base64 as the note has it"`
	Lines  []SigLine `json:"signatures" doc:"each signature line: key name, key hash, and a cosignature's time"`
}

// SigLine is one signature line of a note (c2sp.org/signed-note).
type SigLine struct {
	Name string `json:"name" doc:"the key name"`
	Hash string `json:"key_hash" doc:"the key hash, 8 hex"`
	// Cosigned is the time a cosignature (c2sp.org/tlog-cosignature)
	// states; nil for a plain signature.
	Cosigned *Time `json:"cosigned,omitempty" doc:"for a witness cosignature: the time it states"`
}

// Export is a ledger export's header and its first section's.
type Export struct {
	Logs  int     `json:"logs" doc:"the sections it holds (1 or 2)"`
	First Section `json:"first" doc:"the first section's header"`
}

// Section is one section header of an export.
type Section struct {
	Name       string `json:"name" doc:"authority or decisions"`
	Origin     string `json:"origin" doc:"the log origin"`
	VKey       string `json:"vkey" doc:"the verifier key it states (an import trusts its own)"`
	Size       int64  `json:"size" doc:"entries"`
	Checkpoint string `json:"checkpoint" doc:"the signed checkpoint it states"`
}

// Key is a key file.
type Key struct {
	Kind   string `json:"kind" doc:"what key it is"`
	KeyID  string `json:"key_id,omitempty" doc:"an Ed25519 key's id (64 hex)"`
	Origin string `json:"origin,omitempty" doc:"a verifier key's name: a log's origin, or a witness's name"`
}
