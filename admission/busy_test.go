package admission_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/verify"
)

// never is an Admitter that is never reached in these tests.
type never struct{}

func (never) Admit(verify.Dispatch) (*verify.Verdict, int64, error) {
	panic("the busy server admitted")
}

// TestServeBusy: past MaxConnections a connection is answered busy
// without being read, and the client returns it as a *BusyError naming
// the flag; once the slot is free, requests are read again.
func TestServeBusy(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := admission.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &admission.Server{Runner: never{}, MaxConnections: 1, RequestTimeout: 5 * time.Second}
	done := make(chan error)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	hold, err := net.Dial("unix", sock) // sends nothing: holds the one slot
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	_, err = admission.NewClient(sock).Request(ctx, admission.Request{Dispatch: []byte{1}, AgentBinary: "/a"})
	var busy *admission.BusyError
	want := "the admission server is busy: busy (max-in-flight): 1 requests in flight, the limit set by --max-in-flight; retry after 1s"
	if !errors.As(err, &busy) || !errors.Is(err, admission.ErrBusy) || busy.RetryAfter != 1 || err.Error() != want {
		t.Fatalf("request past the limit: %v; want a *BusyError %q, retry after 1", err, want)
	}
	hold.Close()
	time.Sleep(50 * time.Millisecond)
	_, err = admission.NewClient(sock).Request(ctx, admission.Request{Dispatch: []byte{1}, AgentBinary: "a"})
	if !errors.Is(err, admission.ErrRejected) {
		t.Fatalf("request after the slot is free: %v; want it read and rejected (a relative path)", err)
	}
}
