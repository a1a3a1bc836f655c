// Command tessera measures Tessera's own append rate on its AWS driver
// with the servers writ's tests run on loopback (MariaDB for sequencing,
// versitygw for tiles, both started here): the rate a writ personality on
// the distributed engine is to be compared with (LIMITATIONS.md, the
// distributed engine). With -clients submitters (each waiting for its
// entry's index before the next) it adds -n entries of -size random
// bytes, and prints the rate at which they were sequenced (every index
// assigned) and integrated (the tree grown past the last of them), and
// how often the driver pushed back (ErrPushback, retried after 10 ms).
//
//	go run ./bench/tessera [-n 20000] [-clients 64,1024] [-size 256]
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/writ-ledger/writ/bench/internal/load"

	"github.com/transparency-dev/tessera"
	taws "github.com/transparency-dev/tessera/storage/aws"
	"github.com/writ-ledger/writ/internal/testkit"
	"golang.org/x/mod/sumdb/note"
	"k8s.io/klog/v2"
)

func main() {
	n := flag.Int("n", 20000, "entries added in each run")
	clientsFlag := flag.String("clients", "64,1024", "comma-separated numbers of concurrent submitters, one run each")
	size := flag.Int("size", 256, "bytes of each entry")
	flag.Parse()
	klog.SetOutput(os.Stderr)
	klog.LogToStderr(false) // Tessera's own logging: off, the figures are on stdout
	db, err := testkit.StartMariaDB()
	check(err)
	stops = append(stops, db.Stop)
	store, err := testkit.StartS3()
	check(err)
	stops = append(stops, store.Stop)
	defer stopAll()
	fmt.Printf("== Tessera v1.0.4's AWS driver on MariaDB (127.0.0.1:%d) and versitygw (%s): %d entries of %d bytes, batches of at most 256 entries or 50 ms, %d cores\n",
		db.Port, store.Endpoint, *n, *size, runtime.NumCPU())
	for i, c := range strings.Split(*clientsFlag, ",") {
		clients, err := strconv.Atoi(c)
		check(err)
		seq, integ, pushbacks := measure(db, store, fmt.Sprintf("run%d", i), *n, clients, *size)
		fmt.Printf("%5d submitters: sequenced %6.0f entries/s, integrated %6.0f entries/s, %d pushbacks\n", clients, seq, integ, pushbacks)
	}
}

// measure adds n entries of size bytes from clients goroutines to a new
// log (database and bucket named name) and returns the sequenced and
// integrated rates and the pushbacks met.
func measure(db *testkit.MariaDB, store *testkit.S3, name string, n, clients, size int) (float64, float64, int64) {
	ctx := context.Background()
	dsn, err := db.CreateDatabase(name)
	check(err)
	check(store.CreateBucket(ctx, name))
	cfg, opts := store.Config()
	drv, err := taws.New(ctx, taws.Config{SDKConfig: &cfg, S3Options: opts, Bucket: name, DSN: dsn})
	check(err)
	skey, _, err := note.GenerateKey(rand.Reader, "bench.example/"+name)
	check(err)
	signer, err := note.NewSigner(skey)
	check(err)
	app, shutdown, reader, err := tessera.NewAppender(ctx, drv, tessera.NewAppendOptions().
		WithCheckpointSigner(signer).WithCheckpointInterval(time.Second).WithBatching(256, 50*time.Millisecond))
	check(err)
	defer shutdown(ctx)
	var pushbacks atomic.Int64
	var last atomic.Uint64
	start := time.Now()
	_, _, err = load.Drive(n, clients, func(int) error {
		e := make([]byte, size)
		rand.Read(e)
		idx, err := app.Add(ctx, tessera.NewEntry(e))()
		for errors.Is(err, tessera.ErrPushback) {
			pushbacks.Add(1)
			time.Sleep(10 * time.Millisecond)
			idx, err = app.Add(ctx, tessera.NewEntry(e))()
		}
		for m := last.Load(); err == nil && idx.Index > m && !last.CompareAndSwap(m, idx.Index); m = last.Load() {
		}
		return err
	})
	check(err)
	sequenced := time.Since(start)
	for {
		if sz, err := reader.IntegratedSize(ctx); err == nil && sz > last.Load() {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	integrated := time.Since(start)
	return float64(n) / sequenced.Seconds(), float64(n) / integrated.Seconds(), pushbacks.Load()
}

// stops stop the servers started, so that none outlives the benchmark.
var stops []func() error

func stopAll() {
	for _, stop := range stops {
		stop()
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/tessera:", err)
		stopAll()
		os.Exit(1)
	}
}
