// Package engine puts a writ authority log on a distributed engine:
// transparency-dev/tessera's AWS driver, which integrates entries in a
// MySQL-compatible database and keeps the log as c2sp.org/tlog-tiles in
// an S3-compatible bucket (on AWS, or elsewhere: versitygw, MinIO,
// SeaweedFS). writ's own files of a published log sit beside Tessera's in
// the same bucket: the history bundles of signed, timestamped checkpoints
// that judge each entry's time (tiles.KindHistory, writ/history/...), and
// the log's signed checkpoint with its witness cosignatures. A runner
// syncs from the bucket (through a CDN, nginx or the store's own HTTP)
// exactly as from a directory ledger publish wrote.
//
// [Migrate] copies an existing Badger authority log there; a [Writer]
// appends to it, beside any number of other writers on the same engine,
// each with its own Badger copy of the log: writ sequences the batches
// in the database (writ_batch) under the engine's lock, each judged
// against every batch before it, and publishes them through Tessera's
// migration target. Taking a log back from the engine to Badger alone
// is a replica's sync from the bucket (LIMITATIONS.md).
package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"k8s.io/klog/v2"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/logging"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/go-sql-driver/mysql"
)

// Config names an engine: its database, its bucket and how to reach the
// object store.
type Config struct {
	// DSN is the go-sql-driver/mysql DSN of the database Tessera
	// sequences in (user:password@tcp(host:3306)/dbname); the database
	// must exist, Tessera makes its tables.
	DSN string
	// Bucket is the S3 bucket holding the log; it must exist.
	Bucket string
	// Endpoint is the object store's base URL for a store other than
	// AWS S3 (http://127.0.0.1:7070), addressed path-style; "" for AWS.
	Endpoint string
	// AWS holds the region and credentials (LoadAWS).
	AWS aws.Config
	// Stall is how long Migrate waits for the engine to make progress
	// (a bundle copied) before it gives up (ErrUnavailable); 0 is
	// DefaultStall. Tessera itself waits for ever.
	Stall time.Duration
	// Warn, when set, hears of what a Writer's publisher could not do
	// (a round that failed, tried again).
	Warn func(format string, args ...any)
}

// DefaultStall is Config.Stall's default.
const DefaultStall = 2 * time.Minute

// Errors Migrate and a Writer wrap.
var (
	// ErrConfig: the Config misses a field.
	ErrConfig = errors.New("engine configuration")
	// ErrUnavailable: the database or the bucket does not answer, or
	// refuses the credentials, or the engine stopped making progress.
	ErrUnavailable = errors.New("the engine is unavailable")
	// ErrBusy: another migrate or writer holds the engine's lock in the
	// database past the wait, or this one lost it; nothing more was
	// written.
	ErrBusy = errors.New("the engine is busy: its lock is another's")
	// ErrUnverified: the log does not verify; nothing was written.
	ErrUnverified = errors.New("the authority log does not verify")
)

// answerWithin bounds how long reachable waits for the database and the
// bucket to answer.
const answerWithin = 15 * time.Second

// reachable checks that the database answers a ping and the bucket a
// HEAD request, within answerWithin each: Tessera itself retries an
// engine that is down for as long as its caller waits. The error wraps
// ErrUnavailable and names what did not answer.
func (c Config) reachable(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, answerWithin)
	defer cancel()
	db, err := sql.Open("mysql", c.DSN)
	if err != nil {
		return fmt.Errorf("%w: the database %s: %w", ErrConfig, redact(c.DSN), err)
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		var my *mysql.MySQLError
		if errors.As(err, &my) && (my.Number == 1049 || my.Number == 1193) { // unknown database, unknown parameter
			return fmt.Errorf("%w: the database %s: %w", ErrConfig, redact(c.DSN), err)
		}
		return fmt.Errorf("%w: the database %s: %w", ErrUnavailable, redact(c.DSN), err)
	}
	if _, err := newBucket(c).client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(c.Bucket)}); err != nil {
		var missing *types.NotFound
		if errors.As(err, &missing) {
			return fmt.Errorf("%w: the bucket %s does not exist (create it first)", ErrConfig, c.Bucket)
		}
		return fmt.Errorf("%w: the bucket %s: %w", ErrUnavailable, c.Bucket, err)
	}
	return nil
}

// lockName names the database's lock on migrations into c's bucket
// (GET_LOCK names are at most 64 characters).
func (c Config) lockName() string {
	sum := sha256.Sum256([]byte(c.Endpoint + "\x00" + c.Bucket))
	return "writ-migrate:" + hex.EncodeToString(sum[:16])
}

// lock takes the database's lock on migrations into c's bucket (GET_LOCK,
// waiting up to answerWithin), held by one connection until unlock: two
// migrates never write one bucket at once (the later one's checkpoint
// could roll the bucket back). The lock is the database's, so two
// migrates exclude each other only through the same database server.
// held says whether the lock is still this connection's (a lost
// connection loses it): nil, or ErrBusy. Errors: ErrBusy,
// ErrUnavailable, ErrConfig.
func (c Config) lock(ctx context.Context) (held func(context.Context) error, unlock func(), err error) {
	db, err := sql.Open("mysql", c.DSN)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: the database %s: %w", ErrConfig, redact(c.DSN), err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("%w: the database %s: %w", ErrUnavailable, redact(c.DSN), err)
	}
	release := func() { conn.Close(); db.Close() }
	name := c.lockName()
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", name, int(answerWithin/time.Second)).Scan(&got); err != nil {
		release()
		return nil, nil, fmt.Errorf("%w: the database's lock %s: %w", ErrUnavailable, name, err)
	} else if got.Int64 != 1 {
		release()
		return nil, nil, fmt.Errorf("%w (lock %s on bucket %s, waited %s)", ErrBusy, name, c.Bucket, answerWithin)
	}
	held = func(ctx context.Context) error {
		var mine sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?) = CONNECTION_ID()", name).Scan(&mine); err != nil || mine.Int64 != 1 {
			return fmt.Errorf("%w: this migrate lost its lock %s (%v); nothing more written", ErrBusy, name, err)
		}
		return nil
	}
	return held, func() {
		conn.ExecContext(context.Background(), "SELECT RELEASE_LOCK(?)", name)
		release()
	}, nil
}

// check returns an error wrapping ErrConfig naming the first missing
// field, by its writ flag.
func (c Config) check() error {
	switch {
	case c.DSN == "":
		return fmt.Errorf("%w: no database (--dsn)", ErrConfig)
	case c.Bucket == "":
		return fmt.Errorf("%w: no bucket (--bucket)", ErrConfig)
	case c.AWS.Credentials == nil:
		return fmt.Errorf("%w: no credentials for the object store (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)", ErrConfig)
	}
	return nil
}

// stall is c.Stall, or DefaultStall.
func (c Config) stall() time.Duration {
	if c.Stall > 0 {
		return c.Stall
	}
	return DefaultStall
}

// s3Options are the S3 client options c needs: its endpoint, addressed
// path-style, when not AWS.
func (c Config) s3Options(o *s3.Options) {
	if c.Endpoint != "" {
		o.BaseEndpoint = aws.String(c.Endpoint)
		o.UsePathStyle = true
	}
}

// bucket writes writ's objects into the engine's bucket.
type bucket struct {
	client *s3.Client
	name   string
}

func newBucket(c Config) *bucket {
	return &bucket{client: s3.NewFromConfig(c.AWS, c.s3Options), name: c.Bucket}
}

// put stores data at key, with the content type and cache control a
// reader of a tlog-tiles log expects (the checkpoint is never cached,
// a tile always).
func (b *bucket) put(ctx context.Context, key string, data []byte) error {
	typ, cache := "application/octet-stream", "max-age=604800,immutable"
	if key == "checkpoint" {
		typ, cache = "text/plain; charset=utf-8", "no-cache"
	}
	_, err := b.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b.name), Key: aws.String(key),
		Body: bytes.NewReader(data), ContentType: aws.String(typ), CacheControl: aws.String(cache)})
	if err != nil {
		return fmt.Errorf("writing %s to bucket %s: %w", key, b.name, err)
	}
	return nil
}

// redact is dsn without its password, for messages.
func redact(dsn string) string {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "(a malformed DSN)"
	}
	if cfg.Passwd != "" {
		cfg.Passwd = "xxxxx"
	}
	return cfg.FormatDSN()
}

// LoadAWS returns the AWS SDK configuration for an object store at
// endpoint ("" for AWS S3), from the environment: for AWS, the SDK's
// default chain (environment, shared files, instance roles); for any
// other store, only the static credentials in AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY (an error wrapping ErrConfig without them). The
// region is AWS_REGION's, else us-east-1; the SDK's own log is
// discarded. Errors: ErrConfig's, and the SDK's for a malformed
// configuration.
func LoadAWS(ctx context.Context, endpoint string) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{config.WithLogger(logging.Nop{})}
	if endpoint != "" {
		id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
		if id == "" || secret == "" {
			return aws.Config{}, fmt.Errorf("%w: no credentials for the object store at %s: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", ErrConfig, endpoint)
		}
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(id, secret, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return cfg, nil
}

// get reads the object at key: nil, nil when there is none.
func (b *bucket) get(ctx context.Context, key string, max int64) ([]byte, error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)})
	var missing *types.NoSuchKey
	if errors.As(err, &missing) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("reading %s from bucket %s: %w", key, b.name, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(io.LimitReader(out.Body, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("over %d bytes", max)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s from bucket %s: %w", key, b.name, err)
	}
	return data, nil
}

// QuietLogs keeps Tessera's own logging (klog: its non-AWS warning, its
// retries, its errors with their hex dumps) and the MySQL driver's (a
// connection the database dropped) off stderr, for a command
// line that prints its own results and errors there. It sets klog's
// process-wide flags.
func QuietLogs() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	fs.Set("logtostderr", "false")
	fs.Set("alsologtostderr", "false")
	fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	mysql.SetLogger(log.New(io.Discard, "", 0))
}
