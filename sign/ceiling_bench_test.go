package sign

import (
	"crypto/ed25519"
	"testing"

	"github.com/oasisprotocol/curve25519-voi/curve"
	"github.com/oasisprotocol/curve25519-voi/curve/scalar"
	voi "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"
)

// The verification ceilings of this machine, on all cores, for a 350-byte
// message (about a record's Sig_structure): what bench/perf.sh divides
// every rate by. Each reports verifies/s.

var ceilingMsg = make([]byte, 350)

func ceilingKey() (ed25519.PublicKey, []byte) {
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	return priv.Public().(ed25519.PublicKey), ed25519.Sign(priv, ceilingMsg)
}

func reportRate(b *testing.B, per int) {
	b.ReportMetric(float64(b.N*per)/b.Elapsed().Seconds(), "verifies/s")
}

// BenchmarkCeilingStdlib: crypto/ed25519.Verify, the single-verification
// ceiling the performance issue states its targets against.
func BenchmarkCeilingStdlib(b *testing.B) {
	pub, sig := ceilingKey()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !ed25519.Verify(pub, ceilingMsg, sig) {
				b.Fatal("verify")
			}
		}
	})
	reportRate(b, 1)
}

// BenchmarkCeilingWrit: writ's verifier (curve25519-voi, a cached
// expanded key, crypto/ed25519's verdicts).
func BenchmarkCeilingWrit(b *testing.B) {
	pub, sig := ceilingKey()
	k, err := NewPublicKey(pub)
	if err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := k.Verify(ceilingMsg, sig); err != nil {
				b.Fatal(err)
			}
		}
	})
	reportRate(b, 1)
}

// BenchmarkCeilingBatch64: curve25519-voi batch verification of 64
// signatures (cofactored, so not writ's verdicts; see ed25519.go), per
// signature.
func BenchmarkCeilingBatch64(b *testing.B) {
	pub, sig := ceilingKey()
	ek, err := voi.NewExpandedPublicKey(voi.PublicKey(pub))
	if err != nil {
		b.Fatal(err)
	}
	opts := &voi.Options{Verify: voi.VerifyOptionsFIPS_186_5}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			v := voi.NewBatchVerifier()
			for range 64 {
				v.AddExpandedWithOptions(ek, ceilingMsg, sig, opts)
			}
			if !v.VerifyBatchOnly(nil) {
				b.Fatal("batch")
			}
		}
	})
	reportRate(b, 64)
}

// BenchmarkTorsionCheckR: what making a batch's verdicts equal the single
// verification's would add per signature: [ℓ]R = 0 for each R
// (variable-time, the cheapest form curve25519-voi offers).
func BenchmarkTorsionCheckR(b *testing.B) {
	_, sig := ceilingKey()
	var c curve.CompressedEdwardsY
	if _, err := c.SetBytes(sig[:32]); err != nil {
		b.Fatal(err)
	}
	var r curve.EdwardsPoint
	if _, err := r.SetCompressedY(&c); err != nil {
		b.Fatal(err)
	}
	var zero scalar.Scalar
	b.RunParallel(func(pb *testing.PB) {
		var q curve.EdwardsPoint
		for pb.Next() {
			if !q.DoubleScalarMulBasepointVartime(scalar.BASEPOINT_ORDER, &r, &zero).IsIdentity() {
				b.Fatal("an honest R has a torsion component")
			}
		}
	})
	reportRate(b, 1)
}
