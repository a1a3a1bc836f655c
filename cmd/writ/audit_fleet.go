package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/auditview"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/verify/audit"
)

// auditFleet is `writ audit --fleet FILE`.
func auditFleet(c *cli.Context, o audit.Options) error {
	for _, f := range []string{"state", "vkey", "decisions-vkey"} {
		if c.String(f) != "" {
			return usageErr("--%s does not go with --fleet: the fleet file names every log's key, and --cache keeps what the last audit verified", f)
		}
	}
	data, err := readWhole(c, c.String("fleet"), audit.MaxFleetFile)
	if err != nil {
		return err
	}
	fleet, err := audit.ParseFleet(data)
	if err != nil {
		return inputErr(fmt.Errorf("--fleet %s: %w", c.String("fleet"), err))
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
	rep, err := audit.RunFleet(ctx, fleet, cache, o, c.Duration("timeout"))
	if err != nil {
		return inputErr(fmt.Errorf("--cache: %w", err))
	}
	if c.String("html") != "" {
		page, err := auditview.FleetHTML(rep)
		if err != nil {
			return err
		}
		if err := writeOutput(c, c.String("html"), page); err != nil {
			return err
		}
	}
	switch {
	case wantJSON(c):
		err = emit(c, rep)
	case c.Bool("csv"):
		var out []byte
		if out, err = auditview.FleetCSV(rep); err == nil {
			_, err = c.App.Writer.Write(out)
		}
	default:
		err = emit(c, nil, auditview.FleetText(rep)...)
	}
	if err != nil {
		return err
	}
	if !rep.OK {
		if rep.Failure != nil {
			return fleetFailure(c, rep.Failure)
		}
		return runnersFailed(c, rep)
	}
	return nil
}

// runnersFailed is the error of a fleet audit in which runners' decision
// logs did not verify. When every one of them failed under the key the
// fleet file gives for it (vkey-mismatch), that assertion is refused,
// naming the fleet file, as for the authority log's key.
func runnersFailed(c *cli.Context, rep *audit.FleetReport) error {
	failed, keys := rep.RunnersFailed()
	err := fmt.Errorf("fleet audit failed: %d of %d runners' decision logs did not verify (see the report)", failed, len(rep.Runners))
	if keys {
		return &exitError{code: exitNo, err: err, flag: "--fleet " + c.String("fleet"), rule: rules.VKeyMismatch}
	}
	return noErr(err)
}

// fleetFailure is the error of a fleet audit that failed as a whole: the
// authority log did not verify, or nothing was verified at all. A refused
// trust assertion names where it came from: --trust-root, --policy, or
// the fleet file for a log's key.
func fleetFailure(c *cli.Context, f *audit.Failure) error {
	fleetFlag := "--fleet " + c.String("fleet")
	if f.Rule == rules.NothingVerified {
		return &exitError{code: exitNo, err: fmt.Errorf("fleet audit failed: %s", f.Error), flag: fleetFlag, rule: f.Rule,
			hints: []string{"a fleet audit without runners says nothing about what runners admitted"}}
	}
	err := fmt.Errorf("fleet audit failed: the %s log: %s", f.Log, strings.TrimSpace(f.Error))
	flag, rule, ok := trustRefusal(f.Cause)
	if !ok {
		return noErr(err)
	}
	if rule == rules.VKeyMismatch {
		flag = fleetFlag
	}
	return &exitError{code: exitNo, err: err, flag: flag, rule: rule}
}
