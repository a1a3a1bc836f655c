package testkit

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/transparency-dev/tessera"
	taws "github.com/transparency-dev/tessera/storage/aws"
	"golang.org/x/mod/sumdb/note"
)

// TestTesseraOnMariaDBAndS3: Tessera's AWS driver, the distributed
// engine writ builds on, runs on the servers the tests start (MariaDB
// for sequencing, versitygw for tiles): entries added from several
// goroutines are sequenced and integrated, the checkpoint it publishes
// verifies under the log key and counts them, and it is the file under
// the bucket's directory (what a static file server serves). The store
// honours conditional create-if-absent (If-None-Match: *), which Tessera
// relies on.
func TestTesseraOnMariaDBAndS3(t *testing.T) {
	db, store := MariaDBForTest(t), S3ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dsn, err := db.CreateDatabase("tessera")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateBucket(ctx, "tiles"); err != nil {
		t.Fatal(err)
	}
	cfg, opts := store.Config()
	client := s3.NewFromConfig(cfg, opts)
	for i, want := range []string{"", "PreconditionFailed"} {
		_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("tiles"), Key: aws.String("probe"), Body: bytes.NewReader([]byte{byte(i)}), IfNoneMatch: aws.String("*")})
		var api smithy.APIError
		if got := ""; err != nil && errors.As(err, &api) {
			got = api.ErrorCode()
			if got != want {
				t.Fatalf("create-if-absent, try %d: %v, want %q", i+1, err, want)
			}
		} else if err != nil || want != "" {
			t.Fatalf("create-if-absent, try %d: %v, want %q", i+1, err, want)
		}
	}
	drv, err := taws.New(ctx, taws.Config{SDKConfig: &cfg, S3Options: opts, Bucket: "tiles", DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	skey, vkey, err := note.GenerateKey(rand.Reader, "example.com/testkit")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := note.NewSigner(skey)
	verifier, _ := note.NewVerifier(vkey)
	app, shutdown, reader, err := tessera.NewAppender(ctx, drv, tessera.NewAppendOptions().
		WithCheckpointSigner(signer).WithCheckpointInterval(time.Second).WithBatching(64, 20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	var wg sync.WaitGroup
	for g := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 10 {
				if _, err := app.Add(ctx, tessera.NewEntry([]byte{byte(i), byte(i >> 8)}))(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	awaiter := tessera.NewPublicationAwaiter(ctx, reader.ReadCheckpoint, 100*time.Millisecond)
	_, cp, err := awaiter.Await(ctx, app.Add(ctx, tessera.NewEntry([]byte("last"))))
	if err != nil {
		t.Fatal(err)
	}
	got, err := note.Open(cp, note.VerifierList(verifier))
	if err != nil {
		t.Fatalf("the published checkpoint does not verify: %v\n%s", err, cp)
	}
	if want := "example.com/testkit\n301\n"; len(got.Text) < len(want) || got.Text[:len(want)] != want {
		t.Errorf("checkpoint %q, want it to start %q", got.Text, want)
	}
	file, err := os.ReadFile(filepath.Join(store.Root, "tiles", "checkpoint"))
	if err != nil || !bytes.Equal(file, cp) {
		t.Errorf("the bucket's checkpoint file (%v) is not the checkpoint read through S3", err)
	}
	if err := shutdown(ctx); err != nil {
		t.Error(err)
	}
}

// TestServersComeBack: a database killed (SIGKILL) and started again on
// its data directory keeps what was committed, and an object store
// killed and started again keeps its objects and refuses connections
// meanwhile: the faults the engine's tests inject.
func TestServersComeBack(t *testing.T) {
	db, store := MariaDBForTest(t), S3ForTest(t)
	ctx := context.Background()
	dsn, err := db.CreateDatabase("kept")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec("CREATE TABLE t (v INT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec("INSERT INTO t VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateBucket(ctx, "kept"); err != nil {
		t.Fatal(err)
	}
	cfg, opts := store.Config()
	client := s3.NewFromConfig(cfg, opts)
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("kept"), Key: aws.String("tile/0/000"), Body: bytes.NewReader([]byte("x"))}); err != nil {
		t.Fatal(err)
	}
	db.Kill()
	store.Kill()
	if err := conn.PingContext(ctx); err == nil {
		t.Error("the database answers while killed")
	}
	if _, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("kept"), Key: aws.String("tile/0/000")}); err == nil {
		t.Error("the object store answers while killed")
	}
	if err := db.Start(); err != nil {
		t.Fatal(err)
	}
	if err := store.Start(); err != nil {
		t.Fatal(err)
	}
	var v int
	if err := conn.QueryRowContext(ctx, "SELECT v FROM t").Scan(&v); err != nil || v != 42 {
		t.Errorf("after the restart the row reads %d, %v; want 42", v, err)
	}
	obj, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("kept"), Key: aws.String("tile/0/000")})
	if err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	obj.Body.Close()
}
