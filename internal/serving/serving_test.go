package serving

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/internal/exitcode"
)

func usage(t *testing.T, err error, want string) {
	t.Helper()
	var xe *exitcode.Error
	if !errors.As(err, &xe) || xe.Code != exitcode.Usage || err.Error() != want {
		t.Errorf("error %v, want bad usage %q", err, want)
	}
}

func TestLimits(t *testing.T) {
	good := HTTPLimits{MaxInFlight: 4, MaxPerClient: 2, MaxConns: 8, ReadTimeout: time.Second}
	if l, err := good.Bound(100); err != nil || l.MaxBodyBytes != 100 || l.MaxConns != 8 {
		t.Errorf("Bound: %+v, %v", l, err)
	}
	bad := good
	bad.MaxConns = 0
	_, err := bad.Bound(100)
	usage(t, err, "--max-conns 0: at least 1")
	bad = good
	bad.ReadTimeout = 0
	_, err = bad.Bound(100)
	usage(t, err, "--read-timeout 0s: must be positive")

	var s admission.Server
	if err := (AdmissionLimits{MaxInFlight: 4, MaxPerClient: 2, ReadTimeout: time.Second}).Apply(&s); err != nil || s.MaxConnections != 4 || s.MaxPerClient != 2 {
		t.Errorf("Apply: %+v, %v", s, err)
	}
	usage(t, AdmissionLimits{MaxInFlight: 2, MaxPerClient: 4, ReadTimeout: time.Second}.Apply(&s), "--max-per-client 4 is above --max-in-flight 2")
	if n, err := AnswerBytes(1 << 10); err != nil || n != 1<<30 {
		t.Errorf("AnswerBytes: %d, %v", n, err)
	}
	_, err = AnswerBytes(0)
	if err == nil || !strings.HasPrefix(err.Error(), "--max-answer-mib 0: at least") {
		t.Errorf("AnswerBytes(0): %v", err)
	}
}

func TestListenServe(t *testing.T) {
	addrFile := filepath.Join(t.TempDir(), "addr")
	ln, err := Listen("127.0.0.1:0", addrFile)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(addrFile); string(b) != ln.Addr().String()+"\n" {
		t.Errorf("the address file holds %q", b)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Serve(ctx, &http.Server{Handler: http.NotFoundHandler()}, ln) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET: %v, %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after its context: %v", err)
	}
	if _, err := Listen("127.0.0.1:0", filepath.Join(t.TempDir(), "no", "such", "dir")); err == nil || !strings.HasPrefix(err.Error(), "--addr-file: ") {
		t.Errorf("an address file that cannot be written: %v", err)
	}
}
