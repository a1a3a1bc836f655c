package witness_test

// Re-review of the witness: attacks it withstands (the huge tree sizes
// since formats.MaxTreeSize).

import (
	"errors"
	"testing"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/witness"
	"golang.org/x/mod/sumdb/tlog"
)

// REGRESSION, once an attack (DoS; medium: needs the log's key, which the witness exists to
// check): a checkpoint of size above 2^62 submitted with the old size the
// witness holds reaches tlog.CheckTree (add.go checkConsistent), whose
// maxpow2 never ends for such a size: the request spins one CPU forever
// while holding the log's lock, so every later request for that log
// blocks, and Close (graceful stop) waits for the lock forever. Other
// logs of the witness keep working, but each stuck request keeps a
// connection and a goroutine. (A witness that has not seen the log yet,
// old size 0, cosigns and stores such a size without any proof, and
// replicas that fetch it hang in ledger/replica.Sync: see
// ledger/seen_rereview_test.go.)
func TestRereviewHugeSizeLocksLog(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 5)
	w, err := witness.New(witnessConfig(t, t.TempDir(), a)) // no Cleanup: Close would hang
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddCheckpoint(body(t, 0, nil, a.checkpoint(t, 3))); err != nil {
		t.Fatal(err)
	}
	var h tlog.Hash
	huge := signText(t, formats.Checkpoint{Origin: a.origin, Size: 1<<62 + 1, Hash: h}.Body(), a.signer)
	done := make(chan error, 1)
	go func() {
		_, err := w.AddCheckpoint(body(t, 3, tlog.TreeProof{h, h}, huge))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a checkpoint of size 2^62+1 was cosigned with a junk proof")
		}
		return
	case <-time.After(5 * time.Second):
	}
	next := make(chan error, 1)
	go func() {
		_, err := w.AddCheckpoint(body(t, 3, a.proof(t, 3, 5), a.checkpoint(t, 5)))
		next <- err
	}()
	select {
	case <-next:
	case <-time.After(2 * time.Second):
		t.Error("a legitimate add-checkpoint for the log is blocked behind the request of size 2^62+1")
	}
	t.Fatal("add-checkpoint with size 2^62+1 and old size 3 has not returned after 5s (tlog.CheckTree loops forever)")
}

// REGRESSION: a witness that has not seen a log cosigns a first
// checkpoint of any size (tlog-witness: old size 0 needs no proof); the
// monitoring client reads it back; a writ replica must then cope with
// that size (it does not: ledger/seen_rereview_test.go).
func TestRereviewHugeFirstCheckpointCosigned(t *testing.T) {
	a := newTestLog(t, "example.com/a", 1).grow(t, "a", 1)
	w := newWitness(t, t.TempDir(), a)
	var h tlog.Hash
	huge := signText(t, formats.Checkpoint{Origin: a.origin, Size: 1<<63 - 1, Hash: h}.Body(), a.signer)
	if _, err := w.AddCheckpoint(body(t, 0, nil, huge)); !errors.Is(err, witness.ErrBadRequest) {
		t.Fatalf("a first checkpoint of size 2^63-1: %v, want ErrBadRequest (sizes above formats.MaxTreeSize)", err)
	}
	if _, err := w.AddCheckpoint(body(t, 0, nil, a.checkpoint(t, 1))); err != nil {
		t.Fatalf("the log's real checkpoint after the refusal: %v", err)
	}
}
