// Command mkledger builds a large, valid writ ledger for benchmarks: a
// root, an operator delegation, a pin, and N signed instructions (about
// 300 bytes each), plus optionally a decision log of D decisions
// (bench/proofs times proofs on it, bench/perf.sh audits it). Records are signed in
// parallel and appended in large batches straight to the log (the
// authority checks are what `writ audit` and `writ ledger verify` then
// measure); every record is valid, so the ledger audits clean. With
// -extra M it also writes M more signed instructions (ids N to N+M-1),
// each to its own file in -extra-dir (000000.cose, 000001.cose, ... in id
// order) and not appended, for a benchmark to append later through
// `writ ledger append`. With -decisions-only it appends only the
// decisions, to an existing ledger directory: a copy of one without its
// decision log and runner key becomes another runner of the same
// authority log (a fleet, for `writ audit --fleet`).
//
//	go run ./bench/mkledger -dir /tmp/big -n 1000000 -decisions 1000000
//	go run ./bench/mkledger -dir /tmp/big-r2 -decisions-only -decisions 1000
//	go run ./bench/mkledger -dir /tmp/big -n 1000000 -extra 400 -extra-dir /tmp/extra
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"filippo.io/age"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

func key(n byte) *sign.PrivateKey {
	s, err := signature.LoadED25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, 32)))
	check(err)
	k, err := sign.NewPrivateKey(s)
	check(err)
	return k
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkledger:", err)
		os.Exit(1)
	}
}

func seal(r schemas.Record, keys ...*sign.PrivateKey) []byte {
	p, err := schemas.Encode(r)
	check(err)
	e, err := sign.Sign(r.Kind(), p, keys...)
	check(err)
	return e
}

func main() {
	dir := flag.String("dir", "", "new ledger directory")
	n := flag.Int("n", 1000000, "signed instructions to append")
	decisions := flag.Int("decisions", 0, "decisions to append to the decision log")
	pass := flag.String("passphrase", "bench", "passphrase for the checkpoint and runner keys")
	extra := flag.Int("extra", 0, "further signed instructions to write as files into -extra-dir, not appended")
	extraDir := flag.String("extra-dir", "", "directory for the -extra records (created)")
	days := flag.Int("days", 1, "spread the decisions over this many days, ending now (for an audit page of a month)")
	decisionsOnly := flag.Bool("decisions-only", false, "append the -decisions to the decision log of the existing ledger -dir (a copy of one without its decision log and runner key is another runner), the authority log left as it is")
	flag.Parse()
	if *dir == "" {
		check(fmt.Errorf("-dir is required"))
	}
	if *decisionsOnly {
		makeDecisions(*dir, *decisions, []byte(*pass), time.Now().Unix(), max(*days, 1))
		return
	}
	if *extra < 0 || (*extra > 0) != (*extraDir != "") {
		check(fmt.Errorf("-extra M (M > 0) and -extra-dir go together"))
	}
	now := time.Now()
	rec, err := sign.ScryptRecipient([]byte(*pass), sign.MinWorkFactor)
	check(err)
	log, err := ledgerdir.Init(*dir, "bench.example/ledger", ledgerdir.KeyParams{Recipients: []age.Recipient{rec}, Rand: rand.Reader})
	check(err)
	root, op, rel := key(1), key(10), key(11)
	var raw [][]byte
	for _, k := range []*sign.PrivateKey{root} {
		raw = append(raw, k.Public().Raw())
	}
	t := now.Unix()
	head := [][]byte{
		seal(&schemas.Root{V: 1, Version: 1, Keys: raw, Threshold: 1, IssuedAt: t - 3600, Expires: t + 365*86400}, root),
		seal(&schemas.Delegation{V: 1, Key: op.Public().Raw(), Actions: []schemas.Action{schemas.ActionInstruct}, Streams: []string{"bench/*"},
			Machines: []string{"runner-*"}, NotBefore: t - 3600, NotAfter: t + 30*86400, IssuedAt: t - 3600}, root),
		seal(&schemas.Delegation{V: 1, Key: rel.Public().Raw(), Actions: []schemas.Action{schemas.ActionPin}, Artifacts: []string{"agent"},
			NotBefore: t - 3600, NotAfter: t + 30*86400, IssuedAt: t - 3600}, root),
	}
	_, err = log.Append(head)
	check(err)
	start := time.Now()
	var envBytes int64
	var mu sync.Mutex
	appendSigned(log, *n, func(i int) []byte {
		b := instruction(i, t, op)
		mu.Lock()
		envBytes += int64(len(b))
		mu.Unlock()
		return b
	})
	fmt.Printf("authority: %d entries in %.1fs, %d envelope bytes\n", log.Size(), time.Since(start).Seconds(), envBytes)
	check(log.Close())
	if *extra > 0 {
		writeExtra(*extraDir, *n, *extra, t, op)
	}
	if *decisions > 0 {
		makeDecisions(*dir, *decisions, []byte(*pass), t, max(*days, 1))
	}
}

func instruction(i int, t int64, op *sign.PrivateKey) []byte {
	{
		return seal(&schemas.Instruction{V: 1, ID: fmt.Sprintf("%032x", i), Stream: fmt.Sprintf("bench/s%d", i%16),
			Machine: fmt.Sprintf("runner-%d", i%64), Agent: schemas.ArtifactRef{Name: "agent"}, Brief: strings.Repeat("b", 40),
			Transport: "ssh", IssuedAt: t - 60, NotBefore: t - 60, Expires: t + 3600}, op)
	}
}

// writeExtra writes m more instructions, ids n to n+m-1, each to its own
// file dir/NNNNNN.cose (000000 for id n), signed by the operator key
// like the appended ones.
func writeExtra(dir string, n, m int, t int64, op *sign.PrivateKey) {
	check(os.MkdirAll(dir, 0o755))
	recs := make2(m, func(j int) []byte { return instruction(n+j, t, op) })
	var size int64
	for j, b := range recs {
		check(os.WriteFile(filepath.Join(dir, fmt.Sprintf("%06d.cose", j)), b, 0o644))
		size += int64(len(b))
	}
	fmt.Printf("extra: %d instructions (ids %d to %d), %d envelope bytes, in %s, not appended\n", m, n, n+m-1, size, dir)
}

// appendSigned signs n records on all cores and appends them in order,
// in batches as large as one transaction allows.
func appendSigned(log *ledger.Log, n int, make func(i int) []byte) {
	const chunk = 4096
	for lo := 0; lo < n; lo += chunk {
		hi := min(n, lo+chunk)
		batch := make2(hi-lo, func(j int) []byte { return make(lo + j) })
		for len(batch) > 0 {
			k, size := 0, 0
			for k < len(batch) && size+len(batch[k]) < ledger.MaxBatchBytes && k < ledger.MaxBatchEntries {
				size += len(batch[k])
				k++
			}
			_, err := log.Append(batch[:k])
			check(err)
			batch = batch[k:]
		}
	}
}

func make2(n int, f func(int) []byte) [][]byte {
	out := make([][]byte, n)
	var wg sync.WaitGroup
	per := (n + runtime.NumCPU() - 1) / runtime.NumCPU()
	for w := 0; w < n; w += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				out[i] = f(i)
			}
		}(w, min(n, w+per))
	}
	wg.Wait()
	return out
}

func makeDecisions(dir string, n int, pass []byte, t int64, days int) {
	id, err := sign.ScryptIdentity(pass)
	check(err)
	rec, err := sign.ScryptRecipient(pass, sign.MinWorkFactor)
	check(err)
	dec, err := ledgerdir.OpenDecisions(dir, "bench.example/ledger", ledgerdir.KeyParams{Recipients: []age.Recipient{rec}, Identities: []age.Identity{id}, Rand: rand.Reader})
	check(err)
	verdicts := schemas.Verdicts
	rules := []string{"ok", "unsigned", "unsigned", "agent-digest-mismatch"}
	digest := "sha256:" + strings.Repeat("ab", 32)
	start := time.Now()
	appendSigned(dec, n, func(i int) []byte {
		// With -days, decision i falls on an uneven day back from now and
		// its verdict varies from day to day; one day keeps the plain
		// cycle through the verdicts.
		at, v := t, i%4
		if days > 1 {
			day := (i*i/3 + i) % days
			at, v = t-int64(day)*86400, (i+day+i/5)%4
		}
		d := &schemas.Decision{V: 1, Time: at, Machine: fmt.Sprintf("runner-%d", i%64), Mode: "off", Verdict: verdicts[v],
			Rule: rules[v], InstructionID: fmt.Sprintf("%032x", i), InstructionDigest: digest, Stream: "bench/s1"}
		b, err := schemas.Encode(d)
		check(err)
		return b
	})
	fmt.Printf("decisions: %d entries in %.1fs\n", dec.Size(), time.Since(start).Seconds())
	check(dec.Close())
	_ = filepath.Join
}
