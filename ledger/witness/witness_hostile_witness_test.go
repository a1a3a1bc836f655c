package witness_test

// Hostile review of the witness's state. REGRESSION tests
// are attacks the witness withstands (the oversize checkpoint since it was
// fixed).

import (
	"context"
	"encoding/base64"
	"encoding/binary"

	"net/http"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/witness"
	"golang.org/x/mod/sumdb/note"
)

// sizedCheckpoint returns a checkpoint of a's first 3 leaves signed by a,
// with one extension line sized so that the signed checkpoint is exactly
// n bytes.
func sizedCheckpoint(t *testing.T, a *testLog, n int) []byte {
	t.Helper()
	probe := a.checkpoint(t, 3, "x")
	signed := a.checkpoint(t, 3, strings.Repeat("x", n-len(probe)+1))
	if len(signed) != n {
		t.Fatalf("checkpoint of %d bytes, want %d", len(signed), n)
	}
	return signed
}

// REGRESSION (hostile review: DoS, "writes what it refuses to read"): a
// configured log once submitted a checkpoint so large (extension lines
// are allowed) that the stored copy, with the witness's cosignature, was
// more than the witness's own parser reads: the monitoring client refused
// it and the witness refused to restart on its state. A checkpoint over
// MaxSubmittedCheckpoint is now answered 400 and not stored; one of
// exactly that size is cosigned, served, read by the client and
// reloaded after a restart.
func TestHostileWitnessOversizeCheckpointBricksRestart(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 3)
	other := newTestLog(t, "example.com/other", 2).grow(t, "o", 2)
	dir := t.TempDir()
	w := newWitness(t, dir, a, other)
	url := serve(t, w)
	if _, err := w.AddCheckpoint(body(t, 0, nil, other.checkpoint(t, 2))); err != nil {
		t.Fatal(err)
	}
	status, _, answer := post(t, url, body(t, 0, nil, sizedCheckpoint(t, a, witness.MaxSubmittedCheckpoint+1)))
	if status != http.StatusBadRequest || !strings.Contains(answer, "checkpoint larger than 65536 bytes") {
		t.Fatalf("an oversize checkpoint: %d %q", status, answer)
	}
	if _, n, _ := w.Checkpoint(a.origin); n != 0 {
		t.Fatalf("an oversize checkpoint was stored (size %d)", n)
	}
	status, _, answer = post(t, url, body(t, 0, nil, sizedCheckpoint(t, a, witness.MaxSubmittedCheckpoint)))
	if status != http.StatusOK {
		t.Fatalf("a checkpoint of the largest size: %d %q", status, answer)
	}
	if _, err := (&witness.Client{}).Checkpoint(context.Background(), url, a.origin); err != nil {
		t.Fatalf("the monitoring client refuses what the witness serves: %v", err)
	}
	w.Close()
	w2, err := witness.New(witnessConfig(t, dir, a, other))
	if err != nil {
		t.Fatalf("the witness does not restart on its own state: %v", err)
	}
	w2.Close()
}

// REGRESSION: a submitted checkpoint that carries a forged line in the
// witness's own name and key id, plus an unknown signer's line: the
// witness cosigns, stores and serves only the log's verified signature
// and its real cosignature, and restarts on that state.
func TestHostileWitnessRegressionForgedOwnLine(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 5)
	dir := t.TempDir()
	w := newWitness(t, dir, a)
	url := serve(t, w)
	v, err := formats.NewCosignerVerifier(w.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	forged := make([]byte, 4+8+64)
	binary.BigEndian.PutUint32(forged, v.KeyID())
	signed := a.checkpoint(t, 5)
	signed = append(signed, "\u2014 "+witnessName+" "+base64.StdEncoding.EncodeToString(forged)+"\n"...)
	signed = append(signed, "\u2014 stranger.example/x "+base64.StdEncoding.EncodeToString([]byte("abcdefgh"))+"\n"...)
	status, _, answer := post(t, url, body(t, 0, nil, signed))
	if status != http.StatusOK {
		t.Fatalf("add-checkpoint: %d %q", status, answer)
	}
	served, err := (&witness.Client{}).Checkpoint(context.Background(), url, a.origin)
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(served, note.VerifierList(mustVerifier(t, a.vkey)))
	if err != nil || len(n.Sigs) != 1 || len(n.UnverifiedSigs) != 1 {
		t.Fatalf("served checkpoint: %v\n%s", err, served)
	}
	if _, err := v.Time(served); err != nil {
		t.Fatalf("the served cosignature does not verify: %v", err)
	}
	w.Close()
	w2 := newWitness(t, dir, a)
	if _, size, err := w2.Checkpoint(a.origin); err != nil || size != 5 {
		t.Fatalf("after restart: %d, %v", size, err)
	}
}

// REGRESSION: a split view and a rollback over HTTP, before and after a
// restart: the witness holds A@5; a fork B (same first 3 leaves) at 7 with
// B's own proof from 5, B at 5, and A at 4 are all refused.
func TestHostileWitnessRegressionSplitAndRollback(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 8)
	b := a.fork(t, 3).grow(t, "b", 5)
	dir := t.TempDir()
	w := newWitness(t, dir, a)
	if _, err := w.AddCheckpoint(body(t, 0, nil, a.checkpoint(t, 5))); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		url := serve(t, w)
		cases := []struct {
			name string
			body []byte
			want int
		}{
			{"fork at 7 with its own proof", body(t, 5, b.proof(t, 5, 7), b.checkpoint(t, 7)), http.StatusUnprocessableEntity},
			{"fork at the same size", body(t, 5, nil, b.checkpoint(t, 5)), http.StatusUnprocessableEntity},
			{"fork from old 0", body(t, 0, nil, b.checkpoint(t, 7)), http.StatusConflict},
			{"rollback to 4", body(t, 5, nil, a.checkpoint(t, 4)), http.StatusBadRequest},
			{"rollback claiming old 4", body(t, 4, a.proof(t, 4, 4), a.checkpoint(t, 4)), http.StatusConflict},
		}
		for _, c := range cases {
			if status, _, answer := post(t, url, c.body); status != c.want {
				t.Errorf("round %d: %s: %d %q, want %d", round, c.name, status, answer, c.want)
			}
		}
		if _, size, _ := w.Checkpoint(a.origin); size != 5 {
			t.Fatalf("round %d: the witness holds %d, want 5", round, size)
		}
		w.Close()
		w = newWitness(t, dir, a)
	}
	if _, err := w.AddCheckpoint(body(t, 5, a.proof(t, 5, 8), a.checkpoint(t, 8))); err != nil {
		t.Fatalf("the honest extension: %v", err)
	}
}

func mustVerifier(t *testing.T, vkey string) note.Verifier {
	t.Helper()
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
