package main

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/internal/serving"
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
				cliflags.AdmissionLimits()...),
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
		return exitcode.Usagef("--socket is required (see writ admission serve --help)")
	}
	warnf := func(format string, args ...any) { diag(c, levelWarning, format, args...) }
	srv := &admission.Server{Warnf: warnf}
	if err := cliflags.ApplyAdmissionLimits(c, srv); err != nil {
		return err
	}
	setup, err := readRunnerFlags(c)
	if err != nil {
		return err
	}
	err = serving.Admission{Server: srv, Socket: path, Dir: setup.dir, Trust: setup.trust, Key: setup.kp, Config: setup.cfg,
		PublishDir: c.String("publish-decisions"), PublishEvery: c.Duration("publish-every"), Warnf: warnf,
		Ready: func() {
			diag(c, levelInfo, "serving admission for %s on %s (mode %s)", setup.cfg.Machine, path, setup.cfg.Mode)
		}}.Run(context.Background())
	switch err.(type) {
	case nil:
	case *exitcode.Error:
		return err
	default:
		return failure.Open(err)
	}
	diag(c, levelInfo, "admission server stopped")
	return nil
}
