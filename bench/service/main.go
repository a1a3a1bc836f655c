// Command service measures the writer service (`writ ledger serve
// --write`) against its targets, every figure from one run on this
// machine:
//
//   - records/s with 64 submitters over HTTP on loopback (each waiting
//     for its verified answer: logservice.Client) against the in-process
//     verified-append rate of 64 appenders (verify.Authority.Append) on
//     the same ledger: target at least 0.8;
//   - p99 from request to verified answer (the record durable) against
//     the group commit's interval (the in-process p50 with 64 appenders:
//     one commit cycle) plus twice the fsync floor's p99 (a 512-byte write
//     and fdatasync on the same disk): target at most 1;
//   - the service's peak RSS (VmHWM) taking the same submissions on a
//     ledger of -large records against one of -small: target at most 1.5
//     (flat in the log's size), with its anonymous and file-backed parts.
//
// It also prints the CPU time a record took in process and through the
// service (the service's and the submitters', which share the cores),
// the rate that CPU would allow with every core busy, and the CPU of an
// HTTP exchange alone (a handler that does nothing): why the rate and
// p99 targets are out of reach where the submitters run beside the
// service on two cores (LIMITATIONS.md).
//
// Ledgers are built by bench/mkledger (its -extra records are what is
// submitted) and their state written once (ledger verify
// --rebuild-state), outside the figures.
//
//	go run ./bench/service [-n 20000] [-small 10000] [-large 300000] [-work DIR]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/writ-ledger/writ/bench/internal/load"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/logservice"
	"github.com/writ-ledger/writ/verify"
)

const clients = 64

// profile, when set, is where the rate run's service writes its CPU
// profile (WRIT_CPUPROFILE).
var profile string

func main() {
	n := flag.Int("n", 20000, "records submitted (and appended in process) for the rate and latency")
	small := flag.Int("small", 10000, "records in the small ledger")
	large := flag.Int("large", 300000, "records in the large ledger (memory)")
	memN := flag.Int("mem-n", 5000, "records submitted to each ledger for the memory comparison")
	work := flag.String("work", "", "work directory (default: a new temporary one, removed at the end)")
	flag.StringVar(&profile, "profile", "", "write the service's CPU profile of the rate run to this `FILE`")
	clientProfile := flag.String("client-profile", "", "write the submitters' CPU profile of the rate run to this `FILE`")
	flag.Parse()
	dir := *work
	if dir == "" {
		d, err := os.MkdirTemp("", "writ-bench-service-")
		check(err)
		defer os.RemoveAll(d)
		dir = d
	}
	bin := filepath.Join(dir, "writ")
	run("", "go", "build", "-o", bin, "./cmd/writ")
	fmt.Printf("== writer service: %d submitters, %d records, %d cores, load average %s\n", clients, *n, runtime.NumCPU(), loadavg())

	smallDir, smallExtra := mkledger(dir, bin, "small", *small, *n+*memN)
	largeDir, largeExtra := mkledger(dir, bin, "large", *large, *memN)
	recs, err := load.Records(smallExtra)
	check(err)

	floor := fsyncFloor(dir, 500)
	inRate, inLat, inCPU := inProcess(copyDir(smallDir, filepath.Join(dir, "inproc")), recs[:*n])
	if *clientProfile != "" {
		f, err := os.Create(*clientProfile)
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	svcRate, svcLat, svcCPU := service(bin, copyDir(smallDir, filepath.Join(dir, "svc")), recs[:*n], profile)
	if *clientProfile != "" {
		pprof.StopCPUProfile()
	}
	_, _, smallRun := service(bin, smallDir, recs[*n:], "")
	largeRecs, err := load.Records(largeExtra)
	check(err)
	_, _, largeRun := service(bin, largeDir, largeRecs, "")
	rssSmall, rssLarge := smallRun.rss, largeRun.rss

	fmt.Printf("fsync floor: p50 %s, p99 %s\n", ms(pct(floor, 50)), ms(pct(floor, 99)))
	fmt.Printf("in process (verify.Authority.Append, %d appenders): %.0f records/s, p50 %s, p99 %s\n", clients, inRate, ms(pct(inLat, 50)), ms(pct(inLat, 99)))
	fmt.Printf("service (%d HTTP submitters, answers verified): %.0f records/s, p50 %s, p99 %s\n", clients, svcRate, ms(pct(svcLat, 50)), ms(pct(svcLat, 99)))
	r := svcRate / inRate
	fmt.Printf("records/s, service / in process: %.2f (target at least 0.8: %s)\n", r, verdict(r >= 0.8))
	cpuBound(*n, inRate, inCPU, svcCPU, httpFloor(recs[:*n]))
	bound := pct(inLat, 50) + 2*pct(floor, 99)
	r = float64(pct(svcLat, 99)) / float64(bound)
	fmt.Printf("p99 %s / (group commit interval %s + 2 × fsync floor p99 %s = %s): %.2f (target at most 1: %s)\n",
		ms(pct(svcLat, 99)), ms(pct(inLat, 50)), ms(pct(floor, 99)), ms(bound), r, verdict(r <= 1))
	r = float64(rssLarge) / float64(rssSmall)
	fmt.Printf("service peak RSS taking %d records: %d MiB on %d records, %d MiB on %d: %.2f (target at most 1.5: %s)\n",
		*memN, rssLarge>>10, *large, rssSmall>>10, *small, r, verdict(r <= 1.5))
	fmt.Printf("  at the end: anonymous %d MiB against %d, file-backed (the store's mapped tables) %d MiB against %d\n",
		largeRun.anon>>10, smallRun.anon>>10, largeRun.file>>10, smallRun.file>>10)
	fmt.Printf("load average at the end %s\n", loadavg())
}

// mkledger builds a ledger of n records with extra more as files, its
// state written, and returns its directory and the extra records'.
func mkledger(work, bin, name string, n, extra int) (string, string) {
	d, x := filepath.Join(work, name), filepath.Join(work, name+".extra")
	t0 := time.Now()
	run("", "go", "run", "./bench/mkledger", "-dir", d, "-n", strconv.Itoa(n), "-extra", strconv.Itoa(extra), "-extra-dir", x)
	run(work, bin, "ledger", "verify", "--dir", d, "--rebuild-state")
	fmt.Printf("  %s: %d records, %d to submit, built in %.1fs (not counted)\n", name, n+3, extra, time.Since(t0).Seconds())
	return d, x
}

// inProcess appends recs from 64 goroutines through the ledger's
// verified authority, one record a call, and returns the rate, each
// call's latency and the CPU time the appends took.
func inProcess(dir string, recs [][]byte) (float64, []time.Duration, time.Duration) {
	unlock := benchUnlock()
	a, err := verify.OpenAuthority(ledgerdir.Dir(dir), verify.Trust{}, &unlock)
	check(err)
	defer a.Log.Close()
	cpu0 := selfCPU()
	rate, lat := drive(recs, func(rec []byte) error {
		_, err := a.Append([][]byte{rec})
		return err
	})
	return rate, lat, selfCPU() - cpu0
}

// serviceRun is what one run of the service measured.
type serviceRun struct {
	rss        int64         // the service's peak RSS, KiB
	anon, file int64         // its anonymous and file-backed RSS at the end, KiB
	serviceCPU time.Duration // the service's CPU time while the records were submitted
	clientCPU  time.Duration // the submitters' (this process's)
}

// service starts writ ledger serve --write on dir (writing its CPU
// profile to cpuProfile, when set), submits recs from 64 clients, stops
// it, and returns the rate, each submission's latency and what else the
// run measured.
func service(bin, dir string, recs [][]byte, cpuProfile string) (float64, []time.Duration, serviceRun) {
	vkey, err := formats.ParseLogKey(strings.TrimSpace(string(run("", bin, "ledger", "vkey", "--dir", dir))))
	check(err)
	addrFile := filepath.Join(filepath.Dir(dir), filepath.Base(dir)+".addr")
	os.Remove(addrFile)
	cmd := exec.Command(bin, "ledger", "serve", "--write", "--dir", dir, "--listen", "127.0.0.1:0", "--addr-file", addrFile,
		"--max-per-client", "128", "--max-in-flight", "128", "--rate", "1000000", "--burst", "1000000")
	cmd.Env = append(os.Environ(), "WRIT_PASSPHRASE=bench", "WRIT_CPUPROFILE="+cpuProfile)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	check(cmd.Start())
	running[cmd] = true
	defer func() {
		delete(running, cmd)
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			fail("the service after SIGTERM: %v\n%s", err, errb.Bytes())
		}
	}()
	url, err := load.Ready(addrFile, 10*time.Minute)
	check(err)
	c := &logservice.Client{URL: url, VKey: vkey}
	svc0, self0 := procCPU(cmd.Process.Pid), selfCPU()
	rate, lat := drive(recs, func(rec []byte) error {
		_, err := c.Append(context.Background(), [][]byte{rec})
		return err
	})
	m := serviceRun{serviceCPU: procCPU(cmd.Process.Pid) - svc0, clientCPU: selfCPU() - self0}
	m.rss = procStatus(cmd.Process.Pid, "VmHWM")
	m.anon, m.file = procStatus(cmd.Process.Pid, "RssAnon"), procStatus(cmd.Process.Pid, "RssFile")
	return rate, lat, m
}

// drive calls do for each of recs from 64 goroutines (load.Drive) and
// returns the rate and each call's latency; an error fails the benchmark.
func drive(recs [][]byte, do func([]byte) error) (float64, []time.Duration) {
	rate, lat, err := load.Drive(len(recs), clients, func(i int) error { return do(recs[i]) })
	if err != nil {
		fail("record %v", err)
	}
	return rate, lat
}

// fsyncFloor times n 512-byte writes each followed by fdatasync, in dir.
func fsyncFloor(dir string, n int) []time.Duration {
	f, err := os.Create(filepath.Join(dir, "fsync.probe"))
	check(err)
	defer f.Close()
	buf := make([]byte, 512)
	out := make([]time.Duration, n)
	for i := range out {
		t := time.Now()
		_, err := f.Write(buf)
		check(err)
		check(f.Sync())
		out[i] = time.Since(t)
	}
	return out
}

func pct(xs []time.Duration, p int) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
