package serving

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/httpbound"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/verify"
)

var goodHTTP = HTTPLimits{MaxInFlight: 4, MaxPerClient: 2, MaxConns: 8, ReadTimeout: time.Second}

func TestHTTPRunRefuses(t *testing.T) {
	ready := func(string) error { t.Error("Ready called"); return nil }
	for _, tc := range []struct {
		name string
		h    HTTP
		code int
		want string
	}{
		{"limits", HTTP{Limits: HTTPLimits{MaxInFlight: 0, MaxPerClient: 1, MaxConns: 1, ReadTimeout: time.Second}, Listen: "127.0.0.1:0", Ready: ready},
			exitcode.Usage, "--max-in-flight 0: at least 1"},
		{"listen", HTTP{Limits: goodHTTP, Listen: "no such address", Ready: ready},
			exitcode.Usage, "--listen: listen tcp: address no such address: missing port in address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.h.Run(context.Background())
			var xe *exitcode.Error
			if !errors.As(err, &xe) || xe.Code != tc.code || err.Error() != tc.want {
				t.Errorf("Run: %v, want exit %d %q", err, tc.code, tc.want)
			}
		})
	}
}

func TestHTTPRun(t *testing.T) {
	// Ready's error stops Run before it serves, and is returned as it is.
	stopped := errors.New("the banner could not be printed")
	if err := (HTTP{Limits: goodHTTP, Listen: "127.0.0.1:0", Ready: func(string) error { return stopped }}).Run(context.Background()); err != stopped {
		t.Errorf("Run with Ready failing: %v", err)
	}
	addrFile := filepath.Join(t.TempDir(), "addr")
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error)
	var refused []httpbound.Reason
	h := HTTP{Handler: http.NotFoundHandler(), Limits: goodHTTP, MaxBody: 10, Listen: "127.0.0.1:0", AddrFile: addrFile,
		Refused: func(r httpbound.Reason) { refused = append(refused, r) },
		Ready:   func(a string) error { addr <- a; return nil }}
	go func() { done <- h.Run(ctx) }()
	a := <-addr
	if b, _ := os.ReadFile(addrFile); string(b) != a+"\n" {
		t.Errorf("the address file holds %q, Ready was given %q", b, a)
	}
	resp, err := http.Get("http://" + a + "/")
	if err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET: %v, %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after its context: %v", err)
	}
}

func TestLogServer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log")
	l, err := ledger.Create(dir, "example.com/serving", testkit.Key(t, 50), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	s := NewLogServer("example.com/serving", func() (*ledger.Log, error) { return ledger.OpenReadOnly(dir) }, 64<<20)
	defer s.Close()
	s.Refused(httpbound.Reason("max-in-flight"))
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{
		{"/checkpoint", http.StatusOK, "example.com/serving\n0\n"},
		{"/metrics", http.StatusOK, `reason="max-in-flight"} 1`},
		{"/tile/0/000", http.StatusNotFound, ""},
	} {
		req, _ := http.NewRequest(http.MethodGet, tc.path, nil)
		rec := &recorder{header: http.Header{}}
		s.ServeHTTP(rec, req)
		if rec.status != tc.status || !strings.Contains(rec.body.String(), tc.body) {
			t.Errorf("GET %s: %d %q, want %d with %q", tc.path, rec.status, rec.body.String(), tc.status, tc.body)
		}
	}
}

// recorder is an http.ResponseWriter that keeps the status and body.
type recorder struct {
	header http.Header
	status int
	body   strings.Builder
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

// newAdmission is an Admission over a ledger directory whose authority
// log (empty) is signed by testkit.Key(50).
func newAdmission(t *testing.T) Admission {
	t.Helper()
	dir := t.TempDir()
	l, err := ledger.Create(filepath.Join(dir, ledgerdir.AuthorityDir), "example.com/serving", testkit.Key(t, 50), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	sock, err := os.MkdirTemp("", "serving-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	return Admission{Server: &admission.Server{}, Socket: filepath.Join(sock, "s"), Dir: dir,
		Key:    ledgerdir.KeyParams{Recipients: []age.Recipient{id.Recipient()}, Identities: []age.Identity{id}, Rand: rand.Reader},
		Config: verify.Config{Machine: "runner-1", Now: time.Now}, Warnf: t.Logf, Ready: func() {}}
}

func TestAdmissionRun(t *testing.T) {
	a := newAdmission(t)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	a.Ready = func() { close(ready) }
	done := make(chan error)
	go func() { done <- a.Run(ctx) }()
	<-ready
	if fi, err := os.Stat(a.Socket); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("the socket: %v, %v", fi, err)
	}
	if a.Server.Runner == nil {
		t.Error("the server has no runner")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after its context: %v", err)
	}
	if _, err := os.Stat(a.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket after Run: %v", err)
	}
}

func TestAdmissionRefuses(t *testing.T) {
	a := newAdmission(t)
	a.Ready = func() { t.Error("Ready called") }
	if err := os.WriteFile(a.Socket, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := a.Run(context.Background())
	usage(t, err, "--socket "+a.Socket+" exists and is not a socket; refusing to replace it")
	if _, err := os.Stat(a.Socket); err != nil {
		t.Errorf("the file at --socket: %v", err)
	}

	a = newAdmission(t)
	a.Ready = func() { t.Error("Ready called") }
	other, err := formats.NewLogKey("example.com/serving", testkit.Key(t, 51).Public())
	if err != nil {
		t.Fatal(err)
	}
	a.Trust = verify.Trust{VKey: other}
	err = a.Run(context.Background())
	var xe *exitcode.Error
	var te *ledger.TrustError
	if !errors.As(err, &xe) || xe.Code != exitcode.No || !strings.HasPrefix(err.Error(), "not serving: ") ||
		!errors.As(err, &te) || te.Rule != rules.VKeyMismatch {
		t.Errorf("Run under another log key: %v, want exit 1, not serving, %s", err, rules.VKeyMismatch)
	}
	if _, err := os.Stat(a.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a socket made before the trust was refused: %v", err)
	}
}
