package admission_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/verify"
)

// A runner asks its admission server whether it may run a dispatch, and
// runs it only on res.Run. The same dispatch a second time is a replay.
func ExampleClient_Request() {
	socket, stop := exampleServer() // as `writ admission serve --mode enforce` does
	defer stop()

	c := admission.NewClient(socket)
	dispatch := instruction(1) // the bytes as received from the control plane
	for range 2 {
		res, err := c.Request(context.Background(), admission.Request{Dispatch: dispatch, AgentBinary: agentPath})
		switch {
		case errors.Is(err, admission.ErrWrongDispatch), errors.Is(err, admission.ErrUntrustedServer):
			fmt.Println("not an answer to trust:", err)
			return
		case err != nil:
			fmt.Println("no verdict:", err)
			return
		}
		fmt.Printf("%s (rule %s), run: %v, decision %d\n", res.Verdict.Verdict, res.Rule, res.Run, *res.DecisionIndex)
	}
	// Output:
	// admitted (rule ok), run: true, decision 0
	// refused (rule replay), run: false, decision 1
}

// exampleServer starts a server for a runner on a fresh ledger, and
// returns its socket and what stops it.
func exampleServer() (string, func()) {
	dir, err := os.MkdirTemp("", "writ-admission-example-")
	if err != nil {
		panic(err)
	}
	r, err := newRunner(dir)
	if err != nil {
		panic(err)
	}
	vr, err := r.open(verify.ModeEnforce)
	if err != nil {
		panic(err)
	}
	socket, stop, err := serve(dir, vr)
	if err != nil {
		panic(err)
	}
	return socket, func() { stop(); vr.Close(); os.RemoveAll(dir) }
}

// A runner's server: listen on a socket only this user may use, serve
// until the context ends (a signal, in writ admission serve), then remove
// the socket.
func ExampleServer_Serve() {
	dir, err := os.MkdirTemp("", "writ-admission-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	r, err := newRunner(dir) // a ledger whose authority log the runner trusts
	if err != nil {
		panic(err)
	}
	runner, err := r.open(verify.ModeEnforce) // runner.Open
	if err != nil {
		panic(err)
	}
	defer runner.Close()

	socket := filepath.Join(dir, "admission.sock")
	ln, err := admission.Listen(socket)
	if err != nil {
		panic(err)
	}
	defer os.Remove(socket)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- (&admission.Server{Runner: runner}).Serve(ctx, ln) }()

	res, err := admission.NewClient(socket).Request(ctx, admission.Request{Dispatch: instruction(1), AgentBinary: agentPath})
	if err != nil {
		panic(err)
	}
	fmt.Println("verdict:", res.Verdict.Verdict)
	cancel()
	fmt.Println("stopped:", <-done)
	// Output:
	// verdict: admitted
	// stopped: <nil>
}
