package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/sign"
)

// groupCommitLimit is the decision log's own ceiling on this disk: a
// fresh log (the same store, group commit and signed checkpoint per batch
// as a runner's decision log) appended to by clients goroutines, one
// 300-byte entry per call and nothing checked, for seconds. It returns
// appends per second: what admission serve's decisions per second are
// measured against.
func groupCommitLimit(work string, clients int, seconds float64) float64 {
	s, err := signature.LoadED25519Signer(ed25519.NewKeyFromSeed(make([]byte, 32)))
	if err != nil {
		fail("%v", err)
	}
	key, err := sign.NewPrivateKey(s)
	if err != nil {
		fail("%v", err)
	}
	log, err := ledger.Create(filepath.Join(work, "commit-limit"), "bench.example/commit-limit", key, nil)
	if err != nil {
		fail("%v", err)
	}
	defer log.Close()
	var n atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				entry := fmt.Appendf(nil, "decision %d.%d %0280d", c, i, i)
				if _, err := log.Append([][]byte{entry}); err != nil {
					fail("group commit limit: %v", err)
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds()
}

// hashLimit is the other ceiling of admissions per second: hashing the
// agent binary (from the page cache) on every core, for seconds, and
// nothing else. It returns hashes per second.
func hashLimit(agent string, seconds float64) float64 {
	var n atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	start := time.Now()
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for time.Now().Before(deadline) {
				f, err := os.Open(agent)
				if err != nil {
					fail("%v", err)
				}
				h := sha256.New()
				if _, err := io.CopyBuffer(h, f, buf); err != nil {
					fail("%v", err)
				}
				f.Close()
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds()
}
