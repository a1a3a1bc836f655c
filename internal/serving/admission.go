package serving

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

// Admission is writ admission serve: the runner of a ledger directory
// answering admission requests on a UNIX socket (admission.Server).
type Admission struct {
	Server *admission.Server // its limits set (AdmissionLimits.Apply); Runner is set by Run
	Socket string            // the socket's path, --socket
	Dir    string            // the ledger directory, --ledger
	Trust  verify.Trust
	Key    ledgerdir.KeyParams
	Config verify.Config
	// PublishDir, when not "", is where the decision log is published
	// (runner.PublishEvery) at start, every PublishEvery and at the end;
	// a failure is a warning (Warnf) and publishing goes on.
	PublishDir   string
	PublishEvery time.Duration
	Warnf        func(format string, args ...any)
	// Ready is called once the socket listens and the runner is open,
	// before the first request is served.
	Ready func()
}

// Run refuses a ledger whose authority log a.Trust refuses
// (verify.Trust.Refusal) before anything is created, listens on the
// socket (mode 0600, removed when Run returns), opens the runner
// (runner.Open) and serves until ctx is done or the process gets SIGINT
// or SIGTERM (caught from Ready on), then returns nil once the
// admissions in flight are recorded. Its errors: *exitcode.Error, a
// verdict of no (exit 1) for the trust refused ("not serving: " and the
// refusal, which it wraps), a decision log that cannot record
// (runner.ErrNotRecorded) or serving that failed; bad usage (exit 2) for
// a socket path held by another file or another server; bad input for
// any other listening failure. runner.Open's other errors (a directory
// that is not a ledger, ledger.ErrLocked, key errors) are returned as
// they are.
func (a Admission) Run(ctx context.Context) error {
	if err := a.Trust.Refusal(filepath.Join(a.Dir, ledgerdir.AuthorityDir), time.Now()); err != nil {
		return &exitcode.Error{Code: exitcode.No, Err: fmt.Errorf("not serving: %w", err)}
	}
	ln, err := admission.Listen(a.Socket)
	switch {
	case errors.Is(err, admission.ErrNotSocket):
		return exitcode.Usagef("--socket %s exists and is not a socket; refusing to replace it", a.Socket)
	case errors.Is(err, admission.ErrSocketInUse):
		return exitcode.Usagef("--socket %s: another server is listening there", a.Socket)
	case err != nil:
		return exitcode.Input(err)
	}
	defer os.Remove(a.Socket)
	defer ln.Close()
	r, err := runner.Open(a.Dir, a.Trust, a.Key, a.Config)
	if errors.Is(err, runner.ErrNotRecorded) {
		return &exitcode.Error{Code: exitcode.No, Err: err}
	} else if err != nil {
		return err
	}
	defer r.Close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	a.Server.Runner = r
	a.Ready()
	if a.PublishDir != "" {
		stopPublishing := r.PublishEvery(a.PublishDir, a.PublishEvery, func(err error) {
			a.Warnf("publishing the decision log into %s: %v", a.PublishDir, err)
		})
		defer stopPublishing()
	}
	if err := a.Server.Serve(ctx, ln); err != nil {
		return &exitcode.Error{Code: exitcode.No, Err: err}
	}
	return nil
}
