package witness_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/witness"
)

func TestSubmission(t *testing.T) {
	l := newTestLog(t, "example.com/submission", 1).grow(t, "a", 5)
	signed := l.checkpoint(t, 5)
	proofFile := func(old, size int64) []byte {
		b, err := json.Marshal(formats.ConsistencyProof{OldSize: old, NewSize: size, OldRoot: l.root(t, old), NewRoot: l.root(t, size), Path: l.proof(t, old, size)})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if _, err := witness.NewSubmission([]byte("not a checkpoint"), 0); !errors.Is(err, witness.ErrBadRequest) {
		t.Errorf("NewSubmission of no checkpoint: %v, want ErrBadRequest", err)
	}
	for _, tc := range []struct {
		name     string
		old      int64
		oldGiven bool
		file     []byte
		err      error // nil, formats.ErrProof, or a *witness.ProofSizeError
		wantOld  int64
	}{
		{"proof's old size", 0, false, proofFile(3, 5), nil, 3},
		{"old given, the same", 3, true, proofFile(3, 5), nil, 3},
		{"old given, another", 2, true, proofFile(3, 5), &witness.ProofSizeError{From: true, Want: 2, Got: 3}, 2},
		{"to another size", 0, false, proofFile(3, 4), &witness.ProofSizeError{Want: 5, Got: 4}, 0},
		{"both wrong: old first", 2, true, proofFile(3, 4), &witness.ProofSizeError{From: true, Want: 2, Got: 3}, 2},
		{"not a proof file", 1, true, []byte(`{"old_size": 1}`), formats.ErrProof, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := witness.NewSubmission(signed, tc.old)
			if err != nil || s.Checkpoint.Size != 5 || s.Checkpoint.Origin != "example.com/submission" {
				t.Fatalf("NewSubmission: %+v, %v", s, err)
			}
			err = s.ReadProof(tc.file, tc.oldGiven)
			var pe *witness.ProofSizeError
			switch want := tc.err.(type) {
			case nil:
				if err != nil || len(s.Proof) != len(l.proof(t, 3, 5)) || s.Proof[0] != l.proof(t, 3, 5)[0] {
					t.Errorf("ReadProof: %v, proof %v", err, s.Proof)
				}
			case *witness.ProofSizeError:
				if !errors.As(err, &pe) || *pe != *want || s.Proof != nil {
					t.Errorf("ReadProof: %v, want %v", err, want)
				}
			default:
				if !errors.Is(err, want) {
					t.Errorf("ReadProof: %v, want %v", err, want)
				}
			}
			if s.Old != tc.wantOld {
				t.Errorf("Old = %d, want %d", s.Old, tc.wantOld)
			}
		})
	}
	if got := (&witness.ProofSizeError{From: true, Want: 2, Got: 3}).Error(); got != "the proof is from size 3, not 2" {
		t.Errorf("Error() = %q", got)
	}
}
