// Command witness measures what witnessing costs a writer and what a
// witness sustains, against the writer's checkpoint signing alone:
//   - sign: `ledger checkpoint --refresh`'s work (Log.Refresh: a new
//     checkpoint signed twice by the log key and committed, fsync
//     included), per checkpoint;
//   - witnessed: the same followed by publish.CollectCosignatures from two writ
//     witnesses over HTTP on loopback (each verifies the log signature and
//     the consistency proof, persists its state with fsync, cosigns), per
//     checkpoint, and the writer's extra latency as a ratio to sign;
//   - add-checkpoint: one witness's rate on growing checkpoints of one log
//     (one entry more each, a consistency proof each), requests per second,
//     as a ratio to the writer's signing rate.
//
// The witnesses are ledger/witness handlers on real loopback listeners with
// real state directories; the writer is a real Badger log. Every
// collection must meet the quorum and every request must be cosigned.
//
//	go run ./bench/witness            # N=200
//	go run ./bench/witness -n 50      # smoke
package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/tlog"
)

func main() {
	n := flag.Int("n", 200, "checkpoints per measurement")
	flag.Parse()
	if *n < 1 {
		fail("-n must be at least 1")
	}
	work, err := os.MkdirTemp("", "writ-bench-witness-")
	check(err)
	defer os.RemoveAll(work)

	l, err := ledger.CreateWithHistory(filepath.Join(work, "writer"), "bench.example/witnessed", key(1), nil)
	check(err)
	defer l.Close()
	_, err = l.Append([][]byte{[]byte("first")})
	check(err)

	var policy string
	for i, name := range []string{"a", "b"} {
		url := serveWitness(filepath.Join(work, "w"+name), "bench.example/witness-"+name, byte(20+i), l.VerifierKey())
		vk, err := formats.CosignerKey("bench.example/witness-"+name, key(byte(20+i)).Public())
		check(err)
		policy += fmt.Sprintf("witness %s %s %s\n", name, vk, url)
	}
	p, err := formats.ParsePolicy([]byte("log " + l.VerifierKey() + "\n" + policy + "group q all a b\nquorum q\n"))
	check(err)
	client := &witness.Client{HTTP: &http.Client{Timeout: 10 * time.Second}}

	// Warm up: the first collection creates the witnesses' state.
	collect(l, p, client)

	sign := timeEach(*n, func() { check(l.Refresh()) })
	witnessed := timeEach(*n, func() {
		check(l.Refresh())
		collect(l, p, client)
	})

	// One witness's add-checkpoint rate: growing checkpoints, each with a
	// consistency proof from the previous one.
	solo := serveWitness(filepath.Join(work, "solo"), "bench.example/witness-solo", 30, l.VerifierKey())
	type req struct {
		old    int64
		proof  tlog.TreeProof
		signed []byte
	}
	var reqs []req
	old := int64(0)
	for range *n {
		_, err := l.Append([][]byte{fmt.Appendf(nil, "entry %d", len(reqs))})
		check(err)
		signed, err := l.Checkpoint()
		check(err)
		cp, err := formats.OpenCheckpoint(signed, l.Key())
		check(err)
		var proof tlog.TreeProof
		if old > 0 {
			cproof, err := l.ProveConsistency(old, cp.Size)
			check(err)
			proof = cproof.Path
		}
		reqs = append(reqs, req{old, proof, signed})
		old = cp.Size
	}
	start := time.Now()
	for _, r := range reqs {
		_, err := client.AddCheckpoint(context.Background(), solo, r.old, r.proof, r.signed)
		check(err)
	}
	add := time.Since(start) / time.Duration(len(reqs))

	fmt.Printf("checkpoints per measurement: %d (two witnesses on loopback, quorum all)\n", *n)
	fmt.Printf("%-44s %10s\n", "sign alone (Log.Refresh)", sign.Round(time.Microsecond))
	fmt.Printf("%-44s %10s\n", "sign + collect 2 cosignatures", witnessed.Round(time.Microsecond))
	fmt.Printf("%-44s %10s   ratio to sign %.2f\n", "writer's extra latency per checkpoint", (witnessed - sign).Round(time.Microsecond), float64(witnessed-sign)/float64(sign))
	fmt.Printf("%-44s %10.0f/s ratio to sign rate %.2f\n", "witness add-checkpoint rate (one log)", float64(time.Second)/float64(add), float64(sign)/float64(add))
}

// collect gathers both cosignatures; the quorum must be met.
func collect(l *ledger.Log, p *formats.Policy, c *witness.Client) {
	res, err := publish.CollectCosignatures(context.Background(), l, p, c, 10*time.Second, time.Now)
	if err != nil {
		for _, w := range res.Witnesses {
			fmt.Fprintf(os.Stderr, "witness %s: %v\n", w.Name, w.Err)
		}
		fail("collect: %v", err)
	}
}

// serveWitness starts a writ witness for vkey's log on a loopback
// listener and returns its URL.
func serveWitness(dir, name string, seed byte, vkey string) string {
	w, err := witness.New(witness.Config{Name: name, Key: key(seed), Dir: dir, Logs: []string{vkey}})
	check(err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	go http.Serve(ln, w.Handler())
	return "http://" + ln.Addr().String()
}

// key is the Ed25519 key whose seed is n repeated (fixed keys: the
// bench measures, it protects nothing).
func key(n byte) *sign.PrivateKey {
	s, err := signature.LoadED25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, ed25519.SeedSize)))
	check(err)
	k, err := sign.NewPrivateKey(s)
	check(err)
	return k
}

func timeEach(n int, f func()) time.Duration {
	start := time.Now()
	for range n {
		f()
	}
	return time.Since(start) / time.Duration(n)
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench/witness: "+format+"\n", args...)
	os.Exit(1)
}
