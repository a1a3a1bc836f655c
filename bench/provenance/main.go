// Command provenance measures what checking a build provenance adds to
// pinning a large binary (issue 33's target: at most 10% for a 64 MiB
// binary; the hashing dominates): transfer.NewAttestedPin on the same
// binary, without and with a provenance (a DSSE envelope of an SLSA
// provenance v1 statement, ECDSA P-256, verified offline), the median of
// -runs each, interleaved, in one run. The command line adds the same
// unlocking of the release key to both, which this leaves out.
//
//	go run ./bench/provenance [-mib 64] [-runs 7]
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/transfer"
)

func main() {
	mib := flag.Int("mib", 64, "the binary's size, MiB (an embedded file pads it)")
	runs := flag.Int("runs", 7, "pins of each kind")
	flag.Parse()
	dir, err := os.MkdirTemp("", "writ-bench-provenance-")
	check(err)
	defer os.RemoveAll(dir)
	bin, err := testkit.BuildAgentIn(dir, testkit.BuildOptions{PadBytes: *mib << 20})
	check(err)
	in, err := transfer.Inspect(bin, "sha256")
	check(err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(err)
	pub, err := cryptoutils.MarshalPublicKeyToPEM(&key.PublicKey)
	check(err)
	const builder = "https://builder.example/release"
	env, err := testkit.Provenance(key, in.Digest, in.Build.Revision, builder)
	check(err)
	base := transfer.PinOptions{Artifact: "agent", Version: "1.0.0", IssuedAt: time.Now(), Expires: time.Now().Add(time.Hour)}
	attested := base
	attested.Provenance, attested.ProvenanceKey, attested.Builders = env, pub, []string{builder}
	var plain, with []time.Duration
	for range *runs {
		for _, c := range []struct {
			o   transfer.PinOptions
			out *[]time.Duration
		}{{base, &plain}, {attested, &with}} {
			t0 := time.Now()
			_, a, err := transfer.NewAttestedPin(bin, c.o)
			check(err)
			if c.o.Provenance != nil && a == nil {
				check(fmt.Errorf("no provenance attested"))
			}
			*c.out = append(*c.out, time.Since(t0))
		}
	}
	p, w := median(plain), median(with)
	r := float64(w) / float64(p)
	fmt.Printf("== pinning a %d MiB Go binary (%s), %d runs each, %d cores\n", in.Size>>20, filepath.Base(bin), *runs, runtime.NumCPU())
	fmt.Printf("without provenance: median %s; with a provenance checked: median %s (+%s)\n", p.Round(time.Microsecond), w.Round(time.Microsecond), (w - p).Round(time.Microsecond))
	fmt.Printf("with / without: %.3f (target at most 1.10: %s)\n", r, map[bool]string{true: "met", false: "NOT met"}[r <= 1.10])
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/provenance:", err)
		os.Exit(1)
	}
}
