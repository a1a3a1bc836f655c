// Package tesserarate measures Tessera's own append rate on its AWS
// driver against servers writ's tests start (testkit's MariaDB and
// versitygw): the baseline bench/tessera prints and bench/engine
// compares writ's writers on the same engine with.
package tesserarate

import (
	"context"
	"crypto/rand"
	"errors"
	"sync/atomic"
	"time"

	"github.com/transparency-dev/tessera"
	taws "github.com/transparency-dev/tessera/storage/aws"
	"github.com/writ-ledger/writ/bench/internal/load"
	"github.com/writ-ledger/writ/internal/testkit"
	"golang.org/x/mod/sumdb/note"
)

// Rate is what one measurement found: entries/s sequenced (every index
// assigned) and integrated (the tree grown past the last of them), and
// how often the driver pushed back (tessera.ErrPushback, retried after
// 10 ms).
type Rate struct {
	Sequenced, Integrated float64
	Pushbacks             int64
}

// Measure adds n entries of size random bytes from clients goroutines
// (each waiting for its entry's index before the next) to a new log
// (database and bucket named name), batched at most 256 entries or
// 50 ms.
func Measure(db *testkit.MariaDB, store *testkit.S3, name string, n, clients, size int) (Rate, error) {
	ctx := context.Background()
	dsn, err := db.CreateDatabase(name)
	if err != nil {
		return Rate{}, err
	}
	if err := store.CreateBucket(ctx, name); err != nil {
		return Rate{}, err
	}
	cfg, opts := store.Config()
	drv, err := taws.New(ctx, taws.Config{SDKConfig: &cfg, S3Options: opts, Bucket: name, DSN: dsn})
	if err != nil {
		return Rate{}, err
	}
	skey, _, err := note.GenerateKey(rand.Reader, "bench.example/"+name)
	if err != nil {
		return Rate{}, err
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		return Rate{}, err
	}
	app, shutdown, reader, err := tessera.NewAppender(ctx, drv, tessera.NewAppendOptions().
		WithCheckpointSigner(signer).WithCheckpointInterval(time.Second).WithBatching(256, 50*time.Millisecond))
	if err != nil {
		return Rate{}, err
	}
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
	if err != nil {
		return Rate{}, err
	}
	sequenced := time.Since(start)
	for {
		if sz, err := reader.IntegratedSize(ctx); err == nil && sz > last.Load() {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	integrated := time.Since(start)
	return Rate{float64(n) / sequenced.Seconds(), float64(n) / integrated.Seconds(), pushbacks.Load()}, nil
}
