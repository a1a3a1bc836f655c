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
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/writ-ledger/writ/bench/internal/tesserarate"
	"github.com/writ-ledger/writ/internal/testkit"
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
		r, err := tesserarate.Measure(db, store, fmt.Sprintf("run%d", i), *n, clients, *size)
		check(err)
		fmt.Printf("%5d submitters: sequenced %6.0f entries/s, integrated %6.0f entries/s, %d pushbacks\n", clients, r.Sequenced, r.Integrated, r.Pushbacks)
	}
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
