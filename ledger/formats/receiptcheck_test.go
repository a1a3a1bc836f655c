package formats

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

// TestCheckReceipt: the witnessed-receipt check refuses a receipt without
// a checkpoint and one whose checkpoint misses the quorum, each as an
// *UnwitnessedReceiptError that still wraps ErrQuorum; without a policy
// any receipt whose checkpoint is of its tree passes.
func TestCheckReceipt(t *testing.T) {
	logKey, lv, wkeys, wv := policyFixture(t)
	p, err := ParsePolicy([]byte("log " + lv + "\nwitness a " + wv[0] + "\nwitness b " + wv[1] + "\ngroup q 2 a b\nquorum q\n"))
	if err != nil {
		t.Fatal(err)
	}
	k, now := testLogKey(t, lv), time.Unix(1000, 0)
	proof := &InclusionProof{Index: 0, TreeSize: 3, RootHash: tlog.Hash{1}, Path: []tlog.Hash{{2}, {3}}}
	receipt := func(cp []byte) []byte {
		r, err := SignReceiptWith(proof, policyOrigin, logKey, cp)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var ue *UnwitnessedReceiptError
	if _, err := CheckReceipt(receipt(nil), proof, k, p, now); !errors.As(err, &ue) || ue.Carried || !errors.Is(err, ErrQuorum) || !errors.Is(err, ErrReceipt) {
		t.Fatalf("no checkpoint: %v", err)
	}
	one := receipt(cosigned(t, logKey, wkeys, map[int]int64{0: 100}))
	if _, err := CheckReceipt(one, proof, k, p, now); !errors.As(err, &ue) || !ue.Carried || !errors.Is(err, ErrQuorum) {
		t.Fatalf("one of two: %v", err)
	}
	if v, err := CheckReceipt(one, proof, k, nil, now); err != nil || v.Witnessing != nil || !v.Valid || v.TreeSize != 3 {
		t.Fatalf("no policy: %+v %v", v, err)
	}
	two := receipt(cosigned(t, logKey, wkeys, map[int]int64{0: 100, 1: 200}))
	if v, err := CheckReceipt(two, proof, k, p, now); err != nil || v.Witnessing == nil || !v.Witnessing.Met {
		t.Fatalf("quorum met: %+v %v", v, err)
	}
}
