package ledger

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/formats"
	"golang.org/x/mod/sumdb/tlog"
)

func hashes(h []tlog.Hash) [][]byte {
	var out [][]byte
	for _, x := range h {
		out = append(out, bytes.Clone(x[:]))
	}
	return out
}

// proofLog makes a log of n entries "e0", "e1", ... with the test key 1.
func proofLog(t *testing.T, n int) *Log {
	t.Helper()
	l, err := Create(filepath.Join(t.TempDir(), "log"), "example.com/proofs", testkit.Key(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for i := range n {
		if _, err := l.Append([][]byte{entryBytes(i)}); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func entryBytes(i int) []byte { return []byte{'e', byte(i), byte(i >> 8)} }

// TestProofsIndependently: every inclusion and consistency proof writ
// makes verifies with transparency-dev/merkle, and with writ's own check.
func TestProofsIndependently(t *testing.T) {
	const n = 21
	l := proofLog(t, n)
	h := rfc6962.DefaultHasher
	for size := int64(1); size <= n; size++ {
		for i := int64(0); i < size; i++ {
			p, err := l.ProveInclusion(i, size)
			if err != nil {
				t.Fatal(err)
			}
			if err := proof.VerifyInclusion(h, uint64(i), uint64(size), h.HashLeaf(entryBytes(int(i))), hashes(p.Path), p.RootHash[:]); err != nil {
				t.Fatalf("inclusion %d in %d: transparency-dev/merkle: %v", i, size, err)
			}
			if err := p.Verify(); err != nil {
				t.Fatal(err)
			}
		}
		for old := int64(1); old <= size; old++ {
			c, err := l.ProveConsistency(old, size)
			if err != nil {
				t.Fatal(err)
			}
			if err := proof.VerifyConsistency(h, uint64(old), uint64(size), hashes(c.Path), c.OldRoot[:], c.NewRoot[:]); err != nil {
				t.Fatalf("consistency %d→%d: transparency-dev/merkle: %v", old, size, err)
			}
			if err := c.Verify(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := l.ProveInclusion(n, n); !errors.Is(err, formats.ErrProof) {
		t.Fatalf("an index past the end: %v", err)
	}
	if _, err := l.ProveConsistency(0, n); !errors.Is(err, formats.ErrProof) {
		t.Fatalf("consistency from 0: %v", err)
	}
}

func TestReceipts(t *testing.T) {
	l := proofLog(t, 13)
	key := testkit.Key(t, 1).Public()
	for i := range 13 {
		r, err := l.Receipt(int64(i))
		if err != nil {
			t.Fatal(err)
		}
		p, err := VerifyReceipt(r, entryBytes(i), key)
		if err != nil {
			t.Fatalf("receipt %d: %v", i, err)
		}
		if p.TreeSize != 13 || p.Index != int64(i) {
			t.Fatalf("receipt %d: %+v", i, p)
		}
		if _, err := VerifyReceipt(r, entryBytes(i+1), key); !errors.Is(err, formats.ErrReceipt) {
			t.Fatalf("receipt %d for another entry: %v", i, err)
		}
		if _, err := VerifyReceipt(r, entryBytes(i), testkit.Key(t, 2).Public()); !errors.Is(err, formats.ErrReceipt) {
			t.Fatalf("receipt %d under another key: %v", i, err)
		}
	}
}

// TestVerifierPublicKey: keys whose base64 contains '+' parse (the
// separator is found from the left, where the name cannot hold one).
func TestVerifierPublicKey(t *testing.T) {
	for n := byte(1); n < 60; n++ {
		k := testkit.Key(t, n).Public()
		vkey, err := formats.VerifierKey("example.com/v", k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := formats.VerifierPublicKey(vkey)
		if err != nil || !got.Equal(k) {
			t.Fatalf("%s: %v", vkey, err)
		}
	}
}

// TestCheckpointTime: every checkpoint carries a cosignature/v1 with the
// signing time from the log's clock; Refresh re-signs the same tree with
// a new time; a checkpoint without it, or under another key, has no time.
func TestCheckpointTime(t *testing.T) {
	l := proofLog(t, 2)
	at := time.Unix(time.Now().Unix()+7200, 0) // after the time of the checkpoint it follows
	l.Now = func() time.Time { return at }
	if err := l.Refresh(); err != nil {
		t.Fatal(err)
	}
	signed, _ := l.Checkpoint()
	got, err := formats.CheckpointTime(signed, l.Key())
	if err != nil || !got.Equal(at) {
		t.Fatalf("CheckpointTime = %v, %v; want %v", got, err, at)
	}
	if cp, err := formats.OpenCheckpoint(signed, l.Key()); err != nil || cp.Size != 2 {
		t.Fatalf("the refreshed checkpoint: %+v, %v", cp, err)
	}
	other, _ := formats.VerifierKey("example.com/proofs", testkit.Key(t, 2).Public())
	if _, err := formats.CheckpointTime(signed, testLogKey(t, other)); !errors.Is(err, formats.ErrNoTime) {
		t.Fatalf("under another key: %v", err)
	}
	// Move the time by one second in the signature line: it no longer verifies.
	i := bytes.LastIndex(signed, []byte("\u2014 "))
	forged := bytes.Clone(signed)
	forged[i+len("\u2014 example.com/proofs ")+7] ^= 1
	if _, err := formats.CheckpointTime(forged, l.Key()); !errors.Is(err, formats.ErrNoTime) {
		t.Fatalf("a changed time: %v", err)
	}
}

// TestProveInclusionsAgreesWithOne: the proofs read together (one
// transaction, the root computed once) are, in order, the ones read one
// by one, for every size and a scattered, repeated set of indexes; one
// index out of range refuses them all with ErrProof and no partial
// result.
func TestProveInclusionsAgreesWithOne(t *testing.T) {
	const n = 21
	l := proofLog(t, n)
	for size := int64(1); size <= n; size++ {
		indexes := []int64{size - 1, 0, size / 2, size - 1}
		ps, err := l.ProveInclusions(size, indexes...)
		if err != nil {
			t.Fatal(err)
		}
		for k, i := range indexes {
			one, err := l.ProveInclusion(i, size)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ps[k], one) {
				t.Fatalf("size %d, index %d: together %+v, alone %+v", size, i, ps[k], one)
			}
		}
	}
	cur, err := l.ProveInclusions(0, 3)
	if err != nil || cur[0].TreeSize != n {
		t.Fatalf("size 0 (the current size): %+v, %v", cur, err)
	}
	for _, bad := range [][]int64{{0, n}, {-1}, {n + 5}} {
		ps, err := l.ProveInclusions(n, bad...)
		if !errors.Is(err, formats.ErrProof) || ps != nil {
			t.Fatalf("indexes %v: %v, %v (want ErrProof and nothing)", bad, ps, err)
		}
	}
	if ps, err := l.ProveInclusions(n+1, 0); !errors.Is(err, formats.ErrProof) || ps != nil {
		t.Fatalf("a size past the log: %v, %v", ps, err)
	}
}
