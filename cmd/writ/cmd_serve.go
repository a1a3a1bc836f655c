package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/verify/runner"
)

func admissionCommand() *cli.Command {
	return &cli.Command{
		Name:  "admission",
		Usage: "admission for runners that admit many dispatches",
		Subcommands: []*cli.Command{{
			Name:  "serve",
			Usage: "keep the ledger open and answer admission requests over a UNIX socket",
			Description: "Each connection carries one JSON request and gets one JSON verdict:\n" +
				`  {"dispatch": BASE64, "agent_binary": PATH, "engine_binary": PATH, "provision_dir": DIR, "receipt": BASE64}` + "\n" +
				"The verdict has the fields of writ admit --json, and run (true only when the verdict admits\n" +
				"and the decision is durable), hash_us, record_us (waiting for the decision to be durable)\n" +
				"and total_us (from the request read to the durable verdict). A malformed request gets {\"error\": ...}\n" +
				"and is not recorded. The socket is created mode 0600. SIGINT or SIGTERM stops the server\n" +
				"after the admissions in flight are recorded. Past --max-in-flight requests at once, or\n" +
				"--max-per-client from one client process, a connection is answered at once, unread:\n" +
				`  {"error": "busy (max-in-flight): ...", "retry_after": SECONDS, "run": false}` + "\n" +
				"(writ admission request exits 4, busy); a request not whole within --read-timeout is cut off.",
			Flags: append(append(runnerFlags(), &cli.StringFlag{Name: "socket", Usage: "UNIX socket `PATH` to listen on"},
				&cli.StringFlag{Name: "publish-decisions", Usage: "also publish the decision log as C2SP tlog-tiles into `DIR` (as writ ledger publish --decisions), at start, every --publish-every and at the end"},
				&cli.DurationFlag{Name: "publish-every", Value: 10 * time.Second, Usage: "with --publish-decisions: publish every `DURATION`"}),
				admissionLimitFlags()...),
			Action: serveAdmission,
		}, {
			Name:      "request",
			Usage:     "send one dispatch to an admission server and print its verdict (exit codes as writ admit)",
			ArgsUsage: "DISPATCH",
			Flags: append(append([]cli.Flag{&cli.StringFlag{Name: "socket", Usage: "the server's UNIX socket `PATH`"}}, dispatchFlags()...),
				jsonFlag),
			Action: requestAdmission,
		}},
	}
}

func serveAdmission(c *cli.Context) error {
	if err := wantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	path := c.String("socket")
	if path == "" {
		return usageErr("--socket is required (see writ admission serve --help)")
	}
	srv := &admission.Server{Warnf: func(format string, args ...any) { diag(c, levelWarning, format, args...) }}
	if err := admissionLimits(c, srv); err != nil {
		return err
	}
	setup, err := readRunnerFlags(c)
	if err != nil {
		return err
	}
	if err := setup.trust.Refusal(filepath.Join(setup.dir, ledgerdir.AuthorityDir), time.Now()); err != nil {
		// A wrong --vkey, --trust-root or --policy is refused before
		// anything is created or served, not at each request.
		return noErr(fmt.Errorf("not serving: %w", err))
	}
	ln, err := listenUnix(path)
	if err != nil {
		return err
	}
	defer os.Remove(path)
	defer ln.Close()
	r, err := runner.Open(setup.dir, setup.trust, setup.kp, setup.cfg)
	if err != nil {
		if errors.Is(err, runner.ErrNotRecorded) {
			return noErr(err)
		}
		return openErr(err)
	}
	defer r.Close()
	// Caught from the moment the server says it serves: a SIGTERM then
	// stops it after the admissions in flight, with the decision log closed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	diag(c, levelInfo, "serving admission for %s on %s (mode %s)", setup.cfg.Machine, path, setup.cfg.Mode)
	if to := c.String("publish-decisions"); to != "" {
		stopPublishing := r.PublishEvery(to, c.Duration("publish-every"), func(err error) {
			diag(c, levelWarning, "publishing the decision log into %s: %v", to, err)
		})
		defer stopPublishing()
	}
	srv.Runner = r
	if err := srv.Serve(ctx, ln); err != nil {
		return noErr(err)
	}
	diag(c, levelInfo, "admission server stopped")
	return nil
}

// listenUnix is admission.Listen, its refusals worded for --socket.
func listenUnix(path string) (net.Listener, error) {
	ln, err := admission.Listen(path)
	switch {
	case errors.Is(err, admission.ErrNotSocket):
		return nil, usageErr("--socket %s exists and is not a socket; refusing to replace it", path)
	case errors.Is(err, admission.ErrSocketInUse):
		return nil, usageErr("--socket %s: another server is listening there", path)
	case err != nil:
		return nil, inputErr(err)
	}
	return ln, nil
}
