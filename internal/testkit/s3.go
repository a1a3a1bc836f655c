package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// RequireS3Env is the environment variable that, set to "1", makes
// S3ForTest fail the test instead of skipping it when versitygw is not
// installed. CI sets it.
const RequireS3Env = "WRIT_REQUIRE_S3"

// VersityGWModule is the versitygw release the tests run (go install
// VersityGWModule), the S3-compatible object store of the distributed
// engine's tests.
const VersityGWModule = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// errNoS3 is wrapped by StartS3's error when versitygw is not installed.
var errNoS3 = errors.New("versitygw is not installed (go install " + VersityGWModule + ")")

// S3StartTimeout bounds how long StartS3 waits for the gateway to answer.
const S3StartTimeout = 30 * time.Second

// S3 is a real S3-compatible object store a test started: versitygw's
// POSIX backend on a temporary directory (a bucket is the directory
// Root/BUCKET, an object the file under it, so a static file server on
// Root/BUCKET serves its objects), listening on 127.0.0.1, with static
// credentials. Its methods may be called from any goroutine.
type S3 struct {
	// Endpoint is its base URL, "http://127.0.0.1:PORT".
	Endpoint string
	// AccessKey and SecretKey are its root credentials.
	AccessKey, SecretKey string
	// Root is the directory holding the buckets.
	Root string
	port int
	dir  string
	bin  string
	mu   sync.Mutex
	proc *daemon // nil while stopped
}

// versityGWBinary finds versitygw (goBinary).
func versityGWBinary() (string, error) {
	if p := goBinary("versitygw"); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("testkit: %w", errNoS3)
}

// goBinary finds an executable name on PATH, in $GOBIN or in
// $GOPATH/bin (where go install puts it); "" when it is in none.
func goBinary(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	var dirs []string
	if b, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if lines[0] != "" {
			dirs = append(dirs, lines[0])
		}
		for _, p := range filepath.SplitList(lines[len(lines)-1]) {
			dirs = append(dirs, filepath.Join(p, "bin"))
		}
	}
	for _, d := range dirs {
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode()&0o111 != 0 {
			return filepath.Join(d, name)
		}
	}
	return ""
}

// StartS3 starts versitygw on a new temporary directory and a free port
// of 127.0.0.1, with random credentials, and returns once it answers.
// Stop stops it and removes the directory. The error wraps errNoS3 when
// versitygw is not installed.
func StartS3() (*S3, error) {
	bin, err := versityGWBinary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "writ-s3-")
	if err != nil {
		return nil, fmt.Errorf("testkit: s3 temp dir: %w", err)
	}
	port, err := freePort()
	if err == nil {
		err = os.Mkdir(filepath.Join(dir, "root"), 0o755)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	secret := make([]byte, 16)
	rand.Read(secret)
	s := &S3{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), AccessKey: "writ-test", SecretKey: hex.EncodeToString(secret),
		Root: filepath.Join(dir, "root"), port: port, dir: dir, bin: bin}
	if err := s.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// Start starts the gateway again on its directory and port, after Kill
// (the object store coming back); it returns once it answers.
func (s *S3) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return errors.New("testkit: versitygw is running")
	}
	p, err := startDaemon("versitygw", s.bin, []string{"--port", fmt.Sprintf("127.0.0.1:%d", s.port), "--quiet", "posix", s.Root},
		[]string{"ROOT_ACCESS_KEY=" + s.AccessKey, "ROOT_SECRET_KEY=" + s.SecretKey})
	if err != nil {
		return err
	}
	if err := p.waitFor(s.answers, S3StartTimeout); err != nil {
		return err
	}
	s.proc = p
	return nil
}

// answers says whether the gateway takes a TCP connection.
func (s *S3) answers() bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Config is the AWS SDK configuration of the store (static credentials)
// and the S3 client options it needs (its endpoint, path-style
// addressing).
func (s *S3) Config() (aws.Config, func(*s3.Options)) {
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, "")}
	return cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(s.Endpoint)
		o.UsePathStyle = true
	}
}

// CreateBucket creates the bucket name.
func (s *S3) CreateBucket(ctx context.Context, name string) error {
	cfg, opts := s.Config()
	if _, err := s3.NewFromConfig(cfg, opts).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		return fmt.Errorf("testkit: creating bucket %s: %w", name, err)
	}
	return nil
}

// Kill stops the gateway with SIGKILL: the object store is unavailable
// until Start.
func (s *S3) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.proc.cmd.Process.Kill()
		<-s.proc.exited
		s.proc = nil
	}
}

// Stop stops the gateway (SIGTERM, SIGKILL after 20 s) and removes its
// directory.
func (s *S3) Stop() error {
	s.mu.Lock()
	p := s.proc
	s.proc = nil
	s.mu.Unlock()
	if p != nil {
		p.terminate(syscall.SIGTERM)
	}
	return os.RemoveAll(s.dir)
}

// S3ForTest starts an object store as StartS3 does; t.Cleanup stops it.
// Without versitygw installed it skips the test, or fails it when the
// environment sets WRIT_REQUIRE_S3=1.
func S3ForTest(t testing.TB) *S3 {
	t.Helper()
	s, err := StartS3()
	requireOrSkip(t, err, errNoS3, RequireS3Env)
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}
