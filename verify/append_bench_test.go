package verify_test

import (
	"crypto/ed25519"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/verify"
)

// benchLedger makes an authority log with a root and one operator
// delegation, and returns it loaded, with the operator's records ready.
func benchLedger(b testing.TB, n int) (*verify.Authority, string, [][]byte) {
	b.Helper()
	root, op := testkit.Key(b, 1), testkit.Key(b, 10)
	dir := filepath.Join(b.TempDir(), "log")
	l := createAuthority(b, dir, "example.com/bench", testkit.Key(b, 5), nil)
	del := testkit.Delegation(op, []string{"instruct"}, "demo", "runner-*")
	if _, err := l.Append([][]byte{testkit.Seal(b, testkit.Root(1, root), root), testkit.Seal(b, del, root)}); err != nil {
		b.Fatal(err)
	}
	a, err := verify.LoadAuthority(l, l.Key())
	if err != nil {
		b.Fatal(err)
	}
	recs := make([][]byte, n)
	for i := range recs {
		in := testkit.Instruction(fmt.Sprintf("%032x", i))
		in.Brief = strings.Repeat("b", 40)
		recs[i] = testkit.Seal(b, in, op)
	}
	return a, dir, recs
}

// diskBytes is the space the files under dir occupy (allocated blocks).
func diskBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					n += st.Blocks * 512
				}
			}
		}
		return nil
	})
	return n
}

// BenchmarkVerifiedAppend measures appends of signed instructions of about
// 300 bytes, each verified (signature, schema, authority) before it is
// stored, one record per Append call, from 1, 8, 64 and 1,024 concurrent
// appenders (1,024 fill the group commit: the CPU-bound rate). It reports appends/s, p50 and p99 latency, and the disk space
// per entry against the envelope size.
func BenchmarkVerifiedAppend(b *testing.B) {
	for _, conc := range []int{1, 8, 64, 1024} {
		b.Run(fmt.Sprintf("appenders=%d", conc), func(b *testing.B) {
			a, dir, recs := benchLedger(b, b.N)
			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.SetBytes(int64(len(recs[0])))
			b.ResetTimer()
			start := time.Now()
			for range conc {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := int(next.Add(1) - 1)
						if i >= b.N {
							return
						}
						t := time.Now()
						if _, err := a.Append([][]byte{recs[i]}); err != nil {
							b.Error(err)
							return
						}
						lat[i] = time.Since(t)
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			a.Log.Close()
			if b.N >= 10000 {
				per := float64(diskBytes(dir)) / float64(b.N)
				b.ReportMetric(per, "disk-B/entry")
				b.ReportMetric(per/float64(len(recs[0])), "disk/envelope")
			}
		})
	}
}

// BenchmarkEd25519Ceiling measures plain Ed25519 verifications per second
// on all cores (crypto/ed25519, a 300-byte message): the most verified
// appends this machine could make if nothing else cost anything.
func BenchmarkEd25519Ceiling(b *testing.B) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	msg := make([]byte, 300)
	sig := ed25519.Sign(priv, msg)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !ed25519.Verify(pub, msg, sig) {
				b.Fatal("verify")
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "verifies/s")
}
