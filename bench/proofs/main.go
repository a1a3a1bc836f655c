// Command proofs times inclusion and consistency proofs on an existing
// ledger's authority log, as `writ ledger serve` and `writ ledger prove`
// produce them (stored hashes read from the log, no rescans), at random
// points, after opening the log as a server would (cold: nothing read
// yet). It prints p50 and p99 of each against the targets of the
// performance issue (p50 under 100 µs, p99 under 1 ms) and checks every
// proof.
//
//	go run ./bench/mkledger -dir /tmp/big -n 1000000
//	go run ./bench/proofs -dir /tmp/big            # 2000 of each
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

func main() {
	dir := flag.String("dir", "", "ledger directory (made by bench/mkledger)")
	runs := flag.Int("runs", 2000, "proofs of each kind")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the proof loop to this file")
	flag.Parse()
	if *dir == "" || *runs < 100 {
		fail("-dir is required, and -runs at least 100")
	}
	log, err := ledger.OpenReadOnly(filepath.Join(*dir, ledgerdir.AuthorityDir))
	if err != nil {
		fail("%v", err)
	}
	defer log.Close()
	stop := startCPUProfile(*cpuprofile)
	size := log.Size()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var incl, cons []time.Duration
	for range *runs {
		i := rng.Int64N(size)
		t0 := time.Now()
		p, err := log.ProveInclusion(i, 0)
		incl = append(incl, time.Since(t0))
		if err != nil || p.Verify() != nil {
			fail("inclusion proof of %d: %v", i, err)
		}
		old := 1 + rng.Int64N(size-1)
		t0 = time.Now()
		c, err := log.ProveConsistency(old, 0)
		cons = append(cons, time.Since(t0))
		if err != nil || c.Verify() != nil {
			fail("consistency proof from %d: %v", old, err)
		}
	}
	stop()
	slices.Sort(incl)
	slices.Sort(cons)
	pct := func(d []time.Duration, p int) time.Duration { return d[len(d)*p/100] }
	fmt.Printf("== proofs on a log of %d entries, %d of each, from a cold open\n", size, *runs)
	for _, k := range []struct {
		name string
		d    []time.Duration
	}{{"inclusion", incl}, {"consistency", cons}} {
		p50, p99 := pct(k.d, 50), pct(k.d, 99)
		fmt.Printf("%-11s p50 %8.1f µs / 100 µs: %.2f (%s)   p99 %8.1f µs / 1000 µs: %.2f (%s)\n", k.name,
			us(p50), us(p50)/100, met(us(p50) <= 100), us(p99), us(p99)/1000, met(us(p99) <= 1000))
	}
}

// met says whether a figure meets its target, as bench/perf.sh prints it.
func met(ok bool) string {
	if ok {
		return "target met"
	}
	return "target NOT met"
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench/proofs: "+format+"\n", args...)
	os.Exit(1)
}

// startCPUProfile starts a CPU profile to path (if not empty) and returns
// the function that stops it.
func startCPUProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fail("%v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fail("%v", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
