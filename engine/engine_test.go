package engine

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// TestConfig: a Config missing a field is ErrConfig naming its flag; a
// DSN's password never reaches a message; a store other than AWS takes
// credentials from the environment only.
func TestConfig(t *testing.T) {
	creds := credentials.NewStaticCredentialsProvider("id", "secret", "")
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Bucket: "b", AWS: aws.Config{Credentials: creds}}, "engine configuration: no database (--dsn)"},
		{Config{DSN: "u@tcp(h:3306)/d", AWS: aws.Config{Credentials: creds}}, "engine configuration: no bucket (--bucket)"},
		{Config{DSN: "u@tcp(h:3306)/d", Bucket: "b"}, "engine configuration: no credentials for the object store (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"},
	} {
		if err := tc.c.check(); !errors.Is(err, ErrConfig) || err.Error() != tc.want {
			t.Errorf("check(%+v): %v, want %q", tc.c, err, tc.want)
		}
	}
	if got := redact("writ:hunter2@tcp(db.example:3306)/writ"); strings.Contains(got, "hunter2") || !strings.Contains(got, "db.example:3306") {
		t.Errorf("redact: %q", got)
	}
	if got := redact("::not a dsn"); got != "(a malformed DSN)" {
		t.Errorf("redact of a malformed DSN: %q", got)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	if _, err := LoadAWS(context.Background(), "http://127.0.0.1:7070"); !errors.Is(err, ErrConfig) {
		t.Errorf("LoadAWS without credentials for another store: %v, want ErrConfig", err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "id")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_REGION", "")
	cfg, err := LoadAWS(context.Background(), "http://127.0.0.1:7070")
	if err != nil || cfg.Region != "us-east-1" {
		t.Fatalf("LoadAWS: %v, region %q", err, cfg.Region)
	}
	if v, err := cfg.Credentials.Retrieve(context.Background()); err != nil || v.AccessKeyID != "id" || v.SecretAccessKey != "secret" {
		t.Errorf("credentials %+v, %v", v, err)
	}
}

// TestWatchStall: with no progress for the stall, the migration's
// context is cancelled with ErrUnavailable (Tessera would wait for ever);
// progress keeps it going.
func TestWatchStall(t *testing.T) {
	ctx, stop := context.WithCancelCause(context.Background())
	var progress atomic.Int64
	progress.Store(time.Now().UnixNano())
	go watch(ctx, stop, &progress, 200*time.Millisecond)
	for range 5 { // progress every 100 ms: not stalled
		time.Sleep(100 * time.Millisecond)
		progress.Store(time.Now().UnixNano())
	}
	if err := context.Cause(ctx); err != nil {
		t.Fatalf("cancelled while making progress: %v", err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("not cancelled after the stall")
	}
	if err := context.Cause(ctx); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no progress for") {
		t.Errorf("cause %v, want ErrUnavailable naming the stall", err)
	}
}
