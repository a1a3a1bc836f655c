package ledger

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/writ-ledger/writ/ledger/formats"
)

// ErrInconsistent is wrapped by every *InconsistencyError: the log is not
// an extension of a checkpoint the reader trusted before.
var ErrInconsistent = errors.New("log is inconsistent with a trusted checkpoint")

// InconsistencyError is the evidence that a log shrank or forked: the
// checkpoint trusted before, the one found now, and the consistency proof
// that failed (empty when the log shrank), and, where the reader had
// them, both signed checkpoints as they were read (signed notes).
type InconsistencyError struct {
	Trusted, Found             formats.Checkpoint
	TrustedSigned, FoundSigned []byte
	Proof                      *formats.ConsistencyProof
	Why                        string
}

func (e *InconsistencyError) Error() string {
	s := fmt.Sprintf("%s: trusted size %d root %x, found size %d root %x", e.Why, e.Trusted.Size, e.Trusted.Hash[:], e.Found.Size, e.Found.Hash[:])
	if e.Proof != nil {
		s += fmt.Sprintf("; consistency proof from %d to %d: [%s], which leads to old root %x", e.Proof.OldSize, e.Proof.NewSize,
			strings.Join(hexList(e.Proof), " "), e.Proof.OldRoot[:])
	}
	return s
}

// Unwrap returns ErrInconsistent.
func (e *InconsistencyError) Unwrap() error { return ErrInconsistent }

func hexList(p *formats.ConsistencyProof) []string {
	var out []string
	for _, h := range p.Path {
		out = append(out, hex.EncodeToString(h[:]))
	}
	return out
}

// CheckConsistent proves that the log, whose verified checkpoint is now,
// extends trusted (RFC 9162 §2.1.4): same origin, a size no smaller, and a
// consistency proof from trusted to now, read from the stored hashes,
// that leads to the trusted root. It returns the proof, or an
// *InconsistencyError with both checkpoints and the proof as evidence.
func (l *Log) CheckConsistent(trusted, now formats.Checkpoint) (*formats.ConsistencyProof, error) {
	switch {
	case trusted.Origin != now.Origin:
		return nil, &InconsistencyError{Trusted: trusted, Found: now, Why: fmt.Sprintf("origin changed from %q to %q", trusted.Origin, now.Origin)}
	case now.Size < trusted.Size:
		return nil, &InconsistencyError{Trusted: trusted, Found: now, Why: "the log shrank"}
	case trusted.Size == 0:
		return &formats.ConsistencyProof{NewSize: now.Size, NewRoot: now.Hash}, nil
	}
	p, err := l.ProveConsistency(trusted.Size, now.Size)
	if err != nil {
		return nil, err
	}
	if p.NewRoot != now.Hash {
		return nil, &InconsistencyError{Trusted: trusted, Found: now, Proof: p, Why: "the stored tree is not the one the checkpoint signs"}
	}
	// The proof is built from this log's stored hashes; checking it
	// against the trusted root (not the stored old root) is the test.
	q := *p
	q.OldRoot = trusted.Hash
	if err := q.Verify(); err != nil || p.OldRoot != trusted.Hash {
		return nil, &InconsistencyError{Trusted: trusted, Found: now, Proof: p, Why: "the log forked: the trusted tree is not a prefix of this one"}
	}
	return p, nil
}

// Evidence is an InconsistencyError in a form another tool can check
// without writ: both checkpoints, as signed notes where the reader had
// them (text, with their witness cosignatures), and the consistency
// proof that failed (RFC 9162 §2.1.4, lowercase hex hashes; none when the
// log shrank or its origin changed). A checker verifies both notes under
// the log's key and the proof from Trusted.Size to Found.Size: a valid
// pair of notes that no proof connects is a fork signed by the log key.
type Evidence struct {
	Why     string             `json:"why"`
	Trusted EvidenceCheckpoint `json:"trusted"`
	Found   EvidenceCheckpoint `json:"found"`
	Proof   []string           `json:"proof,omitempty"`
}

// EvidenceCheckpoint is one side of Evidence: the tree (origin, size in
// entries, root hash in lowercase hex) and, when known, its signed note.
type EvidenceCheckpoint struct {
	Origin   string `json:"origin"`
	Size     int64  `json:"size"`
	RootHash string `json:"root_hash"`
	Signed   string `json:"signed,omitempty"`
}

// Evidence returns e as Evidence.
func (e *InconsistencyError) Evidence() Evidence {
	side := func(cp formats.Checkpoint, signed []byte) EvidenceCheckpoint {
		return EvidenceCheckpoint{Origin: cp.Origin, Size: cp.Size, RootHash: hex.EncodeToString(cp.Hash[:]), Signed: string(signed)}
	}
	ev := Evidence{Why: e.Why, Trusted: side(e.Trusted, e.TrustedSigned), Found: side(e.Found, e.FoundSigned)}
	if e.Proof != nil {
		ev.Proof = hexList(e.Proof)
	}
	return ev
}
