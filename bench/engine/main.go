// Command engine measures writ's writers on the distributed engine
// (`writ ledger serve --write --dsn --bucket`: Tessera's AWS driver on
// MariaDB and versitygw, both started here on loopback) against the
// issue's targets, every figure from one run on this machine:
//
//   - verified records/s into the engine, one writer and two writers on
//     it (half the submitters each), with 64 and with 1,024 submitters
//     (each waiting for its verified answer: logservice.Client), beside
//     the Badger writer service's rate and Tessera's own unverified rate
//     (random 256-byte entries: tesserarate) on the same servers: targets
//     at least 1,500 records/s (Tessera's published AWS rate) and at least
//     0.5 of Tessera's rate here; also how long the bucket then took to
//     publish what was answered;
//   - a runner's sync (`writ ledger sync`, a new replica) from the
//     bucket's files, served by nginx from versitygw's directory, against
//     its sync from `writ ledger publish`'s files served by nginx: target
//     at least 0.8.
//
// The ledger is built by bench/mkledger (its -extra records are what is
// submitted, the same to each copy) and its state written once, outside
// the figures.
//
//	go run ./bench/engine [-n 20000] [-clients 64,1024] [-small 10000] [-work DIR]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/writ-ledger/writ/bench/internal/load"
	"github.com/writ-ledger/writ/bench/internal/tesserarate"
	"github.com/writ-ledger/writ/engine"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/logservice"
)

// bench is one run's setting: the binary, the servers, the ledger and
// the records to submit.
type bench struct {
	work, bin string
	db        *testkit.MariaDB
	store     *testkit.S3
	ledger    string
	vkey      *formats.LogKey
	recs      [][]byte
	base      int64 // the ledger's size before the runs
	runs      int
}

// engineRun is what one run on the engine left: its bucket's directory
// and its first writer's ledger.
type engineRun struct{ bucket, dir string }

func main() {
	n := flag.Int("n", 20000, "records submitted in each run")
	clientsFlag := flag.String("clients", "64,1024", "comma-separated numbers of concurrent submitters, one set of runs each")
	small := flag.Int("small", 10000, "records in the ledger the runs start from")
	work := flag.String("work", "", "work directory (default: a new temporary one, removed at the end)")
	flag.Parse()
	engine.QuietLogs() // Tessera's own logging (tesserarate's appender), off
	b := &bench{work: *work}
	if b.work == "" {
		d, err := os.MkdirTemp("", "writ-bench-engine-")
		check(err)
		defer os.RemoveAll(d)
		b.work = d
	}
	b.bin = filepath.Join(b.work, "writ")
	run("", nil, "go", "build", "-o", b.bin, "./cmd/writ")
	b.ledger = filepath.Join(b.work, "ledger")
	extra := filepath.Join(b.work, "extra")
	run("", nil, "go", "run", "./bench/mkledger", "-dir", b.ledger, "-n", strconv.Itoa(*small), "-extra", strconv.Itoa(*n), "-extra-dir", extra)
	run(b.work, nil, b.bin, "ledger", "verify", "--dir", b.ledger, "--rebuild-state")
	recs, err := load.Records(extra)
	check(err)
	vkey, err := formats.ParseLogKey(strings.TrimSpace(string(run("", nil, b.bin, "ledger", "vkey", "--dir", b.ledger))))
	check(err)
	b.recs, b.vkey = recs, vkey
	var cp struct {
		Size int64 `json:"size"`
	}
	check(json.Unmarshal(run("", nil, b.bin, "--json", "ledger", "checkpoint", "--dir", b.ledger), &cp))
	b.base = cp.Size
	b.db, err = testkit.StartMariaDB()
	check(err)
	stops = append(stops, b.db.Stop)
	b.store, err = testkit.StartS3()
	check(err)
	stops = append(stops, b.store.Stop)
	defer stopAll()
	fmt.Printf("== writers on the distributed engine: MariaDB (127.0.0.1:%d), versitygw (%s); a ledger of %d records, %d submitted each run, %d cores, load average %s\n",
		b.db.Port, b.store.Endpoint, *small+3, *n, runtime.NumCPU(), loadavg())
	var synced engineRun
	for _, c := range strings.Split(*clientsFlag, ",") {
		clients, err := strconv.Atoi(c)
		check(err)
		b.rates(clients, &synced)
	}
	b.syncs(synced)
	fmt.Printf("load average at the end %s\n", loadavg())
}

// rates prints one set of runs with clients submitters; the first
// one-writer run's bucket is kept in *synced for the sync comparison.
func (b *bench) rates(clients int, synced *engineRun) {
	b.runs++
	t, err := tesserarate.Measure(b.db, b.store, fmt.Sprintf("tessera%d", b.runs), len(b.recs), clients, 256)
	check(err)
	badger := b.service(clients)
	one, pub1, kept := b.onEngine(clients, 1)
	two, pub2, _ := b.onEngine(clients, 2)
	if synced.bucket == "" {
		*synced = kept
	}
	fmt.Printf("%5d submitters: Tessera alone %.0f entries/s sequenced, %.0f integrated (%d pushbacks); Badger writer service %.0f records/s\n",
		clients, t.Sequenced, t.Integrated, t.Pushbacks, badger)
	for _, r := range []struct {
		writers   int
		rate, pub float64
	}{{1, one, pub1}, {2, two, pub2}} {
		fmt.Printf("  engine, %d writer(s): %.0f records/s answered (at least 1500: %s; / Tessera's integrated %.2f, at least 0.5: %s; / Badger service %.2f), %.0f records/s in the bucket\n",
			r.writers, r.rate, verdict(r.rate >= 1500), r.rate/t.Integrated, verdict(r.rate/t.Integrated >= 0.5), r.rate/badger, r.pub)
	}
}

// service submits the records to a Badger writer service on a copy of
// the ledger and returns the rate.
func (b *bench) service(clients int) float64 {
	dir := b.copyLedger(fmt.Sprintf("badger%d", b.runs))
	cmd, url := b.writer(dir, nil, nil)
	defer stop(cmd)
	return b.drive(clients, []string{url})
}

// onEngine migrates a copy of the ledger to a new engine, starts writers
// on copies of it, submits the records to them and returns the rate
// answered, the rate the bucket's checkpoint then reached the last
// answer's size at, and what the run left.
func (b *bench) onEngine(clients, writers int) (float64, float64, engineRun) {
	name := fmt.Sprintf("engine%d-%d", b.runs, writers)
	dsn, err := b.db.CreateDatabase(strings.ReplaceAll(name, "-", "_"))
	check(err)
	check(b.store.CreateBucket(context.Background(), name))
	env := []string{"WRIT_ENGINE_DSN=" + dsn, "AWS_ACCESS_KEY_ID=" + b.store.AccessKey, "AWS_SECRET_ACCESS_KEY=" + b.store.SecretKey}
	args := []string{"--bucket", name, "--s3-endpoint", b.store.Endpoint}
	dir := b.copyLedger(name)
	run(b.work, env, b.bin, append([]string{"ledger", "migrate", "--dir", dir}, args...)...)
	var urls []string
	for i := range writers {
		d := dir
		if i > 0 {
			d = copyDir(dir, fmt.Sprintf("%s.%d", dir, i))
		}
		cmd, url := b.writer(d, args, env)
		defer stop(cmd)
		urls = append(urls, url)
	}
	start := time.Now()
	rate := b.drive(clients, urls)
	bucket := filepath.Join(b.store.Root, name)
	waitCheckpoint(filepath.Join(bucket, "checkpoint"), b.base+int64(len(b.recs)))
	return rate, float64(len(b.recs)) / time.Since(start).Seconds(), engineRun{bucket, dir}
}

// drive submits every record, one a submission, from clients
// goroutines spread over urls, and returns the rate.
func (b *bench) drive(clients int, urls []string) float64 {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: time.Minute}
	cs := make([]*logservice.Client, len(urls))
	for i, u := range urls {
		cs[i] = &logservice.Client{URL: u, VKey: b.vkey, HTTP: hc}
	}
	rate, _, err := load.Drive(len(b.recs), clients, func(i int) error {
		_, err := cs[i%len(cs)].Append(context.Background(), [][]byte{b.recs[i]})
		return err
	})
	check(err)
	return rate
}

// writer starts writ ledger serve --write on dir with more arguments and
// environment, and returns it and its URL once ready.
func (b *bench) writer(dir string, more, env []string) (*exec.Cmd, string) {
	addrFile := dir + ".addr"
	os.Remove(addrFile)
	cmd := exec.Command(b.bin, append([]string{"ledger", "serve", "--write", "--dir", dir, "--listen", "127.0.0.1:0", "--addr-file", addrFile,
		"--max-per-client", "2048", "--max-in-flight", "2048", "--max-conns", "4096", "--rate", "1000000", "--burst", "1000000"}, more...)...)
	cmd.Env = append(append(os.Environ(), "WRIT_PASSPHRASE=bench"), env...)
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	running = append(running, cmd)
	url, err := load.Ready(addrFile, 5*time.Minute)
	check(err)
	return cmd, url
}

// syncs prints a new replica's sync time from the bucket's files and
// from a publication of the same log (its one writer's ledger), both
// served by nginx.
func (b *bench) syncs(e engineRun) {
	pub := filepath.Join(b.work, "published")
	run(b.work, nil, b.bin, "ledger", "publish", "--dir", e.dir, "--to", pub)
	from := map[string]time.Duration{}
	for _, root := range []string{e.bucket, pub} {
		url, stopNginx, err := testkit.StartNginx(root)
		check(err)
		start := time.Now()
		run(b.work, nil, b.bin, "ledger", "sync", "--dir", filepath.Join(b.work, "replica-"+filepath.Base(root)), "--from", url, "--vkey", b.vkey.String())
		from[root] = time.Since(start)
		stopNginx()
	}
	r := from[pub].Seconds() / from[e.bucket].Seconds()
	fmt.Printf("a new replica's sync of %d records: from the bucket through nginx %.2fs, from a publication through nginx %.2fs: %.2f of the rate (at least 0.8: %s)\n",
		b.base+int64(len(b.recs)), from[e.bucket].Seconds(), from[pub].Seconds(), r, verdict(r >= 0.8))
}
