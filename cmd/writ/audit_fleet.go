package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/auditview"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/verify/audit"
)

// auditFleet is `writ audit --fleet FILE`.
func auditFleet(c *cli.Context, o audit.Options) error {
	if f := cliflags.Given(c, "state", "vkey", "decisions-vkey"); f != nil {
		return exitcode.Usagef("--%s does not go with --fleet: the fleet file names every log's key, and --cache keeps what the last audit verified", f[0])
	}
	data, err := readWhole(c, c.String("fleet"), audit.MaxFleetFile)
	if err != nil {
		return err
	}
	fleet, err := audit.ParseFleet(data)
	if err != nil {
		return exitcode.Input(fmt.Errorf("--fleet %s: %w", c.String("fleet"), err))
	}
	cache := c.String("cache")
	if cache == "" {
		if cache, err = os.MkdirTemp("", "writ-fleet-"); err != nil {
			return err
		}
		defer os.RemoveAll(cache)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o.Progress = progressFor(c, "verifying", "entries")
	rep, err := audit.RunFleet(ctx, fleet, cache, o, c.Duration("timeout"))
	if err != nil {
		return exitcode.Input(fmt.Errorf("--cache: %w", err))
	}
	out, err := auditview.RenderFleet(rep, auditview.Format{CSV: c.Bool("csv"), HTML: c.String("html") != ""})
	if err != nil {
		return err
	}
	if err := printAudit(c, rep, out); err != nil {
		return err
	}
	return fleetRefused(c, rep.Refusal())
}

// fleetRefused is the error of a failed fleet audit (nil for f nil): a
// verdict of no that names the refused trust assertion, the fleet file's
// (a log's key, no runner) or, for the authority log's failure, the flag
// that gives it (--trust-root, --policy).
func fleetRefused(c *cli.Context, f *audit.FleetRefusal) error {
	if f == nil {
		return nil
	}
	err := errors.New(f.Message)
	if f.FleetFile {
		return &exitcode.Error{Code: exitcode.No, Err: err, Flag: "--fleet " + c.String("fleet"), Rule: f.Rule, Hints: f.Hints}
	}
	if flag, rule, ok := failure.TrustRefusal(f.Cause); ok {
		return &exitcode.Error{Code: exitcode.No, Err: err, Flag: flag, Rule: rule}
	}
	return exitcode.Refused(err, f.Hints...)
}
