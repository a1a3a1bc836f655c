package witness

import (
	"fmt"

	"github.com/writ-ledger/writ/ledger/formats"
	"golang.org/x/mod/sumdb/tlog"
)

// Submission is what a log or its operator sends a witness's
// add-checkpoint (Client.AddCheckpoint): a signed checkpoint, the size
// the witness last cosigned for its log, and the consistency proof from
// that size to the checkpoint's.
type Submission struct {
	Signed     []byte         // the signed checkpoint, as sent
	Checkpoint Checkpoint     // its note text, parsed (ParseCheckpoint)
	Old        int64          // the size the witness last cosigned; 0 for none
	Proof      tlog.TreeProof // from Old to Checkpoint.Size; empty from 0
}

// NewSubmission is the submission of the signed checkpoint signed from
// size old, without a proof (ReadProof adds one). Its errors are
// ParseCheckpoint's, wrapping ErrBadRequest.
func NewSubmission(signed []byte, old int64) (*Submission, error) {
	cp, err := ParseCheckpoint(signed)
	if err != nil {
		return nil, err
	}
	return &Submission{Signed: signed, Checkpoint: cp, Old: old}, nil
}

// ProofSizeError is a consistency proof whose sizes do not fit the
// submission: From, its old size (Got) is not the size given (Want);
// else its new size (Got) is not the checkpoint's (Want).
type ProofSizeError struct {
	From      bool
	Want, Got int64
}

func (e *ProofSizeError) Error() string {
	if e.From {
		return fmt.Sprintf("the proof is from size %d, not %d", e.Got, e.Want)
	}
	return fmt.Sprintf("the proof is to size %d, the checkpoint's size is %d", e.Got, e.Want)
}

// ReadProof sets s.Old and s.Proof from a consistency proof file (the
// output of writ ledger consistency --json, formats.ParseConsistencyProofFile:
// its errors wrap formats.ErrProof). When oldGiven, s.Old is a size the
// caller was given, which the proof must be from; the proof must be to the
// checkpoint's size. Either mismatch is a *ProofSizeError, the old size
// checked first; s is unchanged on any error.
func (s *Submission) ReadProof(data []byte, oldGiven bool) error {
	p, err := formats.ParseConsistencyProofFile(data)
	if err != nil {
		return err
	}
	if oldGiven && s.Old != p.OldSize {
		return &ProofSizeError{From: true, Want: s.Old, Got: p.OldSize}
	}
	if p.NewSize != s.Checkpoint.Size {
		return &ProofSizeError{Want: s.Checkpoint.Size, Got: p.NewSize}
	}
	s.Old, s.Proof = p.OldSize, p.Path
	return nil
}
