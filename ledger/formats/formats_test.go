package formats

import (
	"errors"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// TestStandalone: with no log behind them, a checkpoint signed by
// NewNoteSigner and NewCosigner opens with OpenCheckpoint,
// OpenTimedCheckpoint and CheckpointTime under its key only, and a
// receipt from SignReceipt verifies for its entry only.
func TestStandalone(t *testing.T) {
	const origin = "example.com/formats"
	key := testkit.Key(t, 1)
	entries := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	var stored []tlog.Hash
	r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = stored[x]
		}
		return out, nil
	})
	for i, e := range entries {
		hs, err := tlog.StoredHashes(int64(i), e, r)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, hs...)
	}
	n := int64(len(entries))
	root, err := tlog.TreeHash(n, r)
	if err != nil {
		t.Fatal(err)
	}

	s, vkey, err := NewNoteSigner(origin, key)
	if err != nil {
		t.Fatal(err)
	}
	at := testkit.Epoch
	c := Checkpoint{Origin: origin, Size: n, Hash: root}
	signed, err := note.Sign(&note.Note{Text: c.Body()}, s, NewCosigner(origin, key, at))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := OpenCheckpoint(signed, testLogKey(t, vkey)); err != nil || got != c {
		t.Fatalf("OpenCheckpoint = %+v, %v", got, err)
	}
	if tc, err := OpenTimedCheckpoint(signed, testLogKey(t, vkey)); err != nil || tc.Checkpoint != c || !tc.Time.Equal(at) {
		t.Fatalf("OpenTimedCheckpoint = %+v, %v", tc, err)
	}
	other, _ := VerifierKey(origin, testkit.Key(t, 2).Public())
	if _, err := OpenCheckpoint(signed, testLogKey(t, other)); !errors.Is(err, ErrCheckpointSignature) {
		t.Fatalf("under another key: %v", err)
	}
	if _, err := CheckpointTime(signed, testLogKey(t, other)); !errors.Is(err, ErrNoTime) {
		t.Fatalf("time under another key: %v", err)
	}

	path, err := tlog.ProveRecord(n, 1, r)
	if err != nil {
		t.Fatal(err)
	}
	p := &InclusionProof{Index: 1, TreeSize: n, LeafHash: tlog.RecordHash(entries[1]), RootHash: root, Path: path}
	if err := p.Verify(); err != nil {
		t.Fatal(err)
	}
	receipt, err := SignReceipt(p, origin, key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := VerifyReceipt(receipt, entries[1], key.Public())
	if err != nil || got.RootHash != root || got.Index != 1 || got.TreeSize != n {
		t.Fatalf("VerifyReceipt = %+v, %v", got, err)
	}
	if _, err := VerifyReceipt(receipt, entries[0], key.Public()); !errors.Is(err, ErrReceipt) {
		t.Fatalf("another entry: %v", err)
	}
}
