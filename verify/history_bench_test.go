package verify_test

import (
	"fmt"
	"testing"

	"github.com/writ-ledger/writ/verify"
)

// BenchmarkReplayByBatch replays (LoadAuthority) an authority log of a
// root, a delegation and 20,000 signed instructions appended in batches
// of 4,096 and of 1: the checkpoint history costs one more signature
// verification per batch.
//
//	go test ./verify -run '^$' -bench ReplayByBatch -benchtime 3x
func BenchmarkReplayByBatch(b *testing.B) {
	for _, per := range []int{4096, 1} {
		b.Run(fmt.Sprintf("batch=%d", per), func(b *testing.B) {
			a, _, recs := benchLedger(b, 20000)
			l := a.Log
			defer l.Close()
			for i := 0; i < len(recs); i += per {
				if _, err := a.Append(recs[i:min(len(recs), i+per)]); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				if _, err := verify.LoadAuthority(l, l.Key()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(l.Size())*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
}
