package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/auditview"
	"github.com/writ-ledger/writ/internal/clicmd"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/dirhint"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/verify/audit"
)

func auditCommand() *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "verify a ledger end to end, then report its decisions by verdict and rule",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "ledger", Usage: "ledger `DIR`"},
			&cli.StringFlag{Name: "export", Usage: "audit an export `FILE` (writ ledger export) instead, offline"},
			&cli.StringFlag{Name: "fleet", Usage: "audit a fleet instead: the authority log and every runner's decision log, fetched from where they are published, as the `FILE` lists them (`authority URL VKEY`, `runner NAME URL VKEY`)"},
			&cli.StringFlag{Name: "cache", Usage: "with --fleet: keep the verified replicas in `DIR` so that the next audit fetches only what is new (default: a temporary directory)"},
			&cli.DurationFlag{Name: "timeout", Value: tiles.DefaultTimeout, Usage: "with --fleet: cut off a request that takes longer than `DURATION`"},
			&cli.StringFlag{Name: "state", Usage: "auditor state `FILE`: the checkpoints trusted at the last good audit; the logs must extend them, and a good audit updates it"},
			vkeyFlag,
			decisionsVKeyFlag, trustRootFlag, policyFlag,
			&cli.StringFlag{Name: "since", Usage: "count decisions from `TIME` on (RFC 3339, or a duration from now such as -720h); every entry is verified whatever the period"},
			&cli.StringFlag{Name: "until", Usage: "count decisions before `TIME` (RFC 3339, or a duration from now)"},
			&cli.BoolFlag{Name: "csv", Usage: "print the report as CSV (dimension,key,count; with --fleet runner,dimension,key,count) instead of a table"},
			&cli.StringFlag{Name: "html", Usage: "also write the report as one self-contained page to `FILE` (no script, no network)"},
			jsonFlag,
		}, clicmd.AuditListFlags()...),
		Action: auditAction,
	}
}

// auditAction is `writ audit`: it reads the options, verifies a ledger, an
// export or (auditFleet) a fleet, and prints the report.
func auditAction(c *cli.Context) error {
	o, err := auditOptions(c)
	if err != nil {
		return err
	}
	if c.String("fleet") != "" {
		return auditFleet(c, o)
	}
	if c.String("cache") != "" {
		return exitcode.Usagef("--cache goes with --fleet")
	}
	if c.String("html") != "" {
		if err := checkOutput(c, "html", c.String("html")); err != nil {
			return err
		}
	}
	rep, err := runAudit(c, o)
	if err != nil {
		return err
	} else if rep.List != nil && rep.OK {
		return clicmd.PrintAuditList(c, rep)
	}
	return renderAudit(c, rep)
}

// auditOptions reads the flags every audit shares: the trust (keys, first
// root, policy), the period, and the choice of what to audit and how to
// print it, refusing a period that would count nothing and a choice that
// is not one.
func auditOptions(c *cli.Context) (audit.Options, error) {
	vkey, err := logKeyValue(c, "vkey")
	if err != nil {
		return audit.Options{}, err
	}
	dvkey, err := logKeyValue(c, "decisions-vkey")
	if err != nil {
		return audit.Options{}, err
	}
	policy, err := readPolicy(c)
	if err != nil {
		return audit.Options{}, err
	}
	o := audit.Options{AuthorityVKey: vkey, DecisionsVKey: dvkey, StateFile: c.String("state"), TrustRoot: c.String("trust-root"), Now: time.Now, Policy: policy}
	var pe *audit.PeriodError
	if o.Since, o.Until, err = audit.ParsePeriod(c.String("since"), c.String("until"), time.Now()); errors.As(err, &pe) {
		return audit.Options{}, exitcode.Input(err, pe.Hints...)
	}
	if c.Bool("csv") && wantJSON(c) {
		return audit.Options{}, exitcode.Usagef("give at most one of --csv and --json")
	}
	if o.List, err = clicmd.AuditListFilter(c); err != nil {
		return audit.Options{}, err
	}
	if len(cliflags.Given(c, "ledger", "export", "fleet")) != 1 {
		return audit.Options{}, exitcode.Usagef("give exactly one of --ledger DIR, --export FILE and --fleet FILE")
	}
	return o, nil
}

// runAudit verifies the ledger directory of --ledger or the export of
// --export under o, drawing progress on a terminal. A report that says
// the audit failed is no error here; one that could not be made is.
func runAudit(c *cli.Context, o audit.Options) (*audit.Report, error) {
	var rep *audit.Report
	var err error
	switch dir, export := c.String("ledger"), c.String("export"); {
	case dir != "":
		if err := dirhint.LedgerDir(dir); err != nil {
			return nil, err
		}
		o.Progress = progressFor(c, "verifying", "entries")
		rep, err = audit.Run(audit.Dir(dir), o)
	default:
		if fi, err := os.Stat(export); err == nil && fi.IsDir() {
			return nil, dirhint.Error("export", export)
		}
		o.Progress = progressFor(c, "verifying the export", "bytes")
		rep, err = audit.Run(audit.ExportFile(export), o)
	}
	if err != nil {
		if errors.Is(err, replica.ErrExport) {
			return nil, exitcode.Input(err)
		}
		return nil, failure.Open(err)
	}
	return rep, nil
}

// renderAudit prints rep: after a good audit the page to --html, and the
// CSV, the JSON or the text report on stdout; after a failed one the JSON
// report, and the failure as a verdict of no.
func renderAudit(c *cli.Context, rep *audit.Report) error {
	out, err := auditview.Render(rep, auditview.Format{CSV: c.Bool("csv"), HTML: c.String("html") != "", Version: version()})
	if err != nil {
		return err
	}
	if err := printAudit(c, rep, out); err != nil {
		return err
	}
	if !rep.OK {
		return exitcode.Refused(fmt.Errorf("audit failed: %s: %w", rep.Failure.Where(), rep.Failure.Cause))
	}
	return nil
}

// printAudit prints an audit's report (rep, an *audit.Report or an
// *audit.FleetReport) rendered as out: the page to --html when there is
// one, then the JSON report, the CSV or the text on stdout.
func printAudit(c *cli.Context, rep any, out auditview.Output) error {
	if out.Page != nil {
		if err := writeOutput(c, c.String("html"), out.Page); err != nil {
			return err
		}
	}
	switch {
	case wantJSON(c):
		return emit(c, rep)
	case out.CSV != nil:
		_, err := c.App.Writer.Write(out.CSV)
		return err
	}
	return emit(c, nil, out.Text...)
}
