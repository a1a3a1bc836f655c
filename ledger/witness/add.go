package witness

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// emptyRoot is the root hash of the empty tree, SHA-256 of the empty
// string (RFC 6962 §2.1).
var emptyRoot = tlog.Hash(sha256.Sum256(nil))

// AddCheckpoint runs one add-checkpoint request (c2sp.org/tlog-witness,
// "add-checkpoint") whose body is body, and returns the witness's
// cosignature: one signed-note signature line, "— <name> <base64 of key
// id || 8-byte time || Ed25519 signature>\n" (cosignature/v1, timestamp
// never zero). The checks, in order, and what each failure wraps (the
// handler's status in brackets):
//
//   - the body parses (ParseRequest, ParseCheckpoint) and its checkpoint is
//     at most MaxSubmittedCheckpoint bytes: ErrBadRequest [400];
//   - the origin is a configured log: ErrUnknownLog [404];
//   - the note verifies under the log's keys (note.Open: at least one
//     trusted signature, none failing; other signatures ignored):
//     ErrForbidden [403], or ErrBadRequest [400] for a malformed note;
//   - old size ≤ checkpoint size: ErrBadRequest [400];
//
// then, atomically with the update, under the log's lock:
//
//   - old size = the size last cosigned (0 if never): *ConflictError [409];
//   - size 0 has the empty tree's root; no proof with old size 0; the
//     proof verifies from the cosigned checkpoint (RFC 6962 §2.1.2,
//     tlog.CheckTree), which also refuses the same size with another
//     root: ErrInconsistent [422];
//   - the new state (the checkpoint, the log signatures that verified, the
//     cosignature) is durable on disk before AddCheckpoint returns; if not,
//     the error wraps ErrWitness [500] and the state is unchanged.
//
// A closed witness returns ErrClosed [503].
func (w *Witness) AddCheckpoint(body []byte) ([]byte, error) {
	req, err := ParseRequest(body)
	if err != nil {
		return nil, err
	}
	if len(req.Checkpoint) > MaxSubmittedCheckpoint {
		return nil, refuse(ErrBadRequest, fmt.Sprintf("checkpoint larger than %d bytes", MaxSubmittedCheckpoint))
	}
	c, err := ParseCheckpoint(req.Checkpoint)
	if err != nil {
		return nil, err
	}
	l := w.logs[c.Origin]
	if l == nil {
		return nil, refuse(ErrUnknownLog, "unknown log: the witness has no key for this checkpoint's origin")
	}
	n, err := note.Open(req.Checkpoint, l.verifiers)
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(err, &unverified):
		return nil, refuse(ErrForbidden, "no signature by a trusted key of this log is on the checkpoint")
	case errors.As(err, &invalid):
		return nil, refuse(ErrForbidden, "a signature by a trusted key of this log does not verify")
	case err != nil:
		return nil, refuse(ErrBadRequest, "malformed checkpoint: not a signed note")
	}
	if req.OldSize > c.Size {
		return nil, refuse(ErrBadRequest, "old size larger than the checkpoint size")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.closed.Load() {
		return nil, ErrClosed
	}
	if req.OldSize != l.size {
		return nil, &ConflictError{Size: l.size}
	}
	if err := checkConsistent(req, c, l); err != nil {
		return nil, err
	}
	line, cosig, err := w.cosign(n.Text)
	if err != nil {
		return nil, err
	}
	stored := render(n.Text, n.Sigs, cosig)
	if err := store(l, stored); err != nil {
		return nil, fmt.Errorf("%w: recording the checkpoint of %q: %w", ErrWitness, c.Origin, err)
	}
	l.size, l.hash, l.signed = c.Size, c.Hash, stored
	return line, nil
}

// checkConsistent is the 422 rules, with old = l.size already checked.
func checkConsistent(req *Request, c Checkpoint, l *logState) error {
	switch {
	case c.Size == 0 && c.Hash != emptyRoot:
		return refuse(ErrInconsistent, "a checkpoint of size 0 must have the empty tree's root hash")
	case req.OldSize == 0 && len(req.Proof) > 0:
		return refuse(ErrInconsistent, "a consistency proof was given with old size 0")
	case req.OldSize == 0:
		return nil // the empty tree is consistent with any tree
	}
	// CheckTree also refuses a proof when the sizes are equal and the
	// root hashes differ (or the proof is not empty).
	if tlog.CheckTree(req.Proof, c.Size, c.Hash, l.size, l.hash) != nil {
		if c.Size == l.size {
			return refuse(ErrInconsistent, "same size as the cosigned checkpoint with another root hash (or a non-empty proof)")
		}
		return refuse(ErrInconsistent, "the consistency proof does not verify")
	}
	return nil
}

// cosign signs text with a cosignature/v1 at the witness's clock, in
// whole seconds, and returns the signature line and its parsed form. A
// clock at or before 1970-01-01T00:00:01Z is an error wrapping
// ErrWitness: the timestamp must not be zero.
func (w *Witness) cosign(text string) ([]byte, note.Signature, error) {
	now := w.now()
	if now.Unix() <= 0 {
		return nil, note.Signature{}, fmt.Errorf("%w: the witness clock reads %s; a cosignature's time must be after 1970", ErrWitness, now.UTC().Format(time.RFC3339))
	}
	signed, err := note.Sign(&note.Note{Text: text}, formats.NewCosigner(w.name, w.key, now))
	if err != nil {
		return nil, note.Signature{}, fmt.Errorf("%w: cosigning: %w", ErrWitness, err)
	}
	line := signed[len(text)+1:]
	sl, err := formats.ParseSigLine(strings.TrimSuffix(string(line), "\n"))
	if err != nil || sl.Name != w.name {
		return nil, note.Signature{}, fmt.Errorf("%w: cosigning produced %q", ErrWitness, line)
	}
	return line, note.Signature{Name: w.name, Hash: w.cosig.KeyID(), Base64: sl.Base64()}, nil
}
