package logservice

import (
	"golang.org/x/mod/sumdb/tlog"
)

// AddPath is where a Service takes submissions: POST, the body one
// signed record as its file holds it (Content-Type ContentTypeRecord) or
// a CBOR array of them (ContentTypeBatch), appended all or none, in
// order, as one `writ ledger append` of the same files is.
const AddPath = "/writ/v1/add"

// Added is a Service's answer to a submission it appended (200, JSON): each
// record's entry with its inclusion proof in the tree of Checkpoint, and
// Checkpoint, the log's signed checkpoint (C2SP tlog-checkpoint, as
// `writ ledger checkpoint` prints it) that includes them all. Every
// record is durable when it is sent.
type Added struct {
	Entries    []AddedEntry `json:"entries"`
	Checkpoint string       `json:"checkpoint"`
}

// AddedEntry is one appended record: where it is in the log, what it is,
// and the inclusion proof of its leaf (RFC 9162 §2.1.3.1) in the tree of
// the answer's checkpoint, hashes in base64 as tlog.Hash encodes them.
type AddedEntry struct {
	Index          int64       `json:"index"`
	Kind           string      `json:"kind"`
	Digest         string      `json:"digest"`
	InclusionProof []tlog.Hash `json:"inclusion_proof"`
}

// Refusal is a Service's answer to a submission it did not append (a 4xx
// or 5xx status, JSON): what `writ --json ledger append` prints on
// stderr for the same records (the message, its exit code, the rule id
// and the next acts), and, when one record was refused, its position in
// the submission (0-based; the message is then that record's refusal,
// without the record's name, which only the submitter knows). Nothing of
// the submission was appended. Status and RetryAfter are not sent: the
// client fills them from the answer's status line and Retry-After header.
type Refusal struct {
	Err        string   `json:"error"`
	Exit       int      `json:"exit"`
	Rule       string   `json:"rule"`
	Hints      []string `json:"hints"`
	Record     *int     `json:"record,omitempty"`
	Status     int      `json:"-"`
	RetryAfter int      `json:"-"` // seconds, 0 when the answer gave none
}

// Error returns the refusal's message.
func (r *Refusal) Error() string { return r.Err }
