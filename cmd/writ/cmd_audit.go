package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

func auditCommand() *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "verify a ledger end to end, then report its decisions by verdict and rule",
		Flags: []cli.Flag{
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
		},
		Action: audit,
	}
}

func audit(c *cli.Context) error {
	vkey, err := vkeyValue(c, "vkey")
	if err != nil {
		return err
	}
	dvkey, err := vkeyValue(c, "decisions-vkey")
	if err != nil {
		return err
	}
	policy, err := readPolicy(c)
	if err != nil {
		return err
	}
	now := time.Now()
	o := verify.AuditOptions{AuthorityVKey: vkey, DecisionsVKey: dvkey, StateFile: c.String("state"), TrustRoot: c.String("trust-root"), Now: time.Now, Policy: policy}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"since", &o.Since}, {"until", &o.Until}} {
		if c.IsSet(f.name) {
			if *f.dst, err = parseTime(f.name, c.String(f.name), now); err != nil {
				return err
			}
		}
	}
	// A period that starts in the future counts nothing: a duration
	// written without its minus sign (--since 720h for the last 30 days).
	if v := c.String("since"); c.IsSet("since") && o.Since.After(now) {
		hint := "a duration counts from now: the last 30 days are --since -720h"
		if d, perr := time.ParseDuration(v); perr == nil && d > 0 {
			hint = fmt.Sprintf("a duration counts from now: for the last %s write --since -%s", v, v)
		}
		return &exitError{code: exitUsage, err: fmt.Errorf("--since %s is %s, after now: the period would hold no decisions", v, o.Since.UTC().Format(time.RFC3339)), hints: []string{hint}}
	}
	if !o.Since.IsZero() && !o.Until.IsZero() && !o.Until.After(o.Since) {
		return usageErr("--until %s is not after --since %s", c.String("until"), c.String("since"))
	}
	if c.Bool("csv") && wantJSON(c) {
		return usageErr("give at most one of --csv and --json")
	}
	given := 0
	for _, f := range []string{"ledger", "export", "fleet"} {
		if c.String(f) != "" {
			given++
		}
	}
	if given != 1 {
		return usageErr("give exactly one of --ledger DIR, --export FILE and --fleet FILE")
	}
	if c.String("fleet") != "" {
		return auditFleet(c, o)
	}
	if c.String("cache") != "" {
		return usageErr("--cache goes with --fleet")
	}
	if c.String("html") != "" {
		if err := checkOutput(c, "html", c.String("html")); err != nil {
			return err
		}
	}
	var rep *verify.Report
	switch dir, export := c.String("ledger"), c.String("export"); {
	case dir != "":
		if err := isLedgerDir(dir); err != nil {
			return err
		}
		o.Progress = progressFor(c, "verifying", "entries")
		rep, err = verify.Audit(dir, o)
	default:
		if fi, err := os.Stat(export); err == nil && fi.IsDir() {
			return directoryErr("export", export)
		}
		o.Progress = progressFor(c, "verifying the export", "bytes")
		rep, err = verify.AuditExport(export, o)
	}
	if err != nil {
		if errors.Is(err, replica.ErrExport) {
			return inputErr(err)
		}
		return openErr(err)
	}
	if rep.OK && c.String("html") != "" {
		page, err := auditHTML(rep)
		if err != nil {
			return err
		}
		if err := writeOutput(c, c.String("html"), page); err != nil {
			return err
		}
	}
	if rep.OK && c.Bool("csv") {
		out, err := auditCSV(rep)
		if err != nil {
			return err
		}
		if _, err := c.App.Writer.Write(out); err != nil {
			return err
		}
	} else if wantJSON(c) {
		if err := emit(c, rep); err != nil {
			return err
		}
	} else if rep.OK {
		logged := int64(0)
		if rep.DecisionLog != nil {
			logged = rep.DecisionLog.Size
		}
		lines := []string{fmt.Sprintf("ok: %s verified (%d authority, %d decisions)", plural(rep.EntriesVerified, "entry", "entries"), rep.AuthorityEntries, logged)}
		if rep.Authority != nil {
			lines = append(lines, fmt.Sprintf("authority checkpoint: %s size %d root %s", rep.Authority.Origin, rep.Authority.Size, rep.Authority.RootHash))
		}
		if rep.Witnessing != nil {
			lines = append(lines, "authority checkpoint "+witnessedText(*rep.Witnessing))
		}
		if rep.DecisionLog != nil {
			lines = append(lines, fmt.Sprintf("decision checkpoint: %s size %d root %s", rep.DecisionLog.Origin, rep.DecisionLog.Size, rep.DecisionLog.RootHash))
		}
		if rep.RunnerKeyProtection != "" {
			lines = append(lines, "runner key protection: "+rep.RunnerKeyProtection)
		}
		for _, l := range trustLines(rep) {
			lines = append(lines, oneLine("trust: "+l)) // a key's name can come from the ledger
		}
		if !rep.Trust.Independent {
			lines = append(lines, "trust: not independent: "+notIndependent)
		}
		lines = append(lines, fmt.Sprintf("admitted although a rule failed (enforce would refuse): %d", rep.WouldRefuse))
		lines = append(lines, "decisions by verdict:")
		for _, v := range schemas.Verdicts {
			lines = append(lines, fmt.Sprintf("  %-18s %d", v, rep.ByVerdict[string(v)]))
		}
		lines = append(lines, "decisions by rule:")
		rules := make([]string, 0, len(rep.ByRule))
		for r := range rep.ByRule {
			rules = append(rules, r)
		}
		slices.Sort(rules)
		for _, r := range rules {
			lines = append(lines, fmt.Sprintf("  %-26s %d", r, rep.ByRule[r]))
		}
		lines = append(lines, auditLines(rep)...)
		if err := emit(c, nil, lines...); err != nil {
			return err
		}
	}
	if !rep.OK {
		where := rep.Failure.Log + " log"
		if rep.Failure.Index >= 0 {
			where += fmt.Sprintf(" entry %d", rep.Failure.Index)
		}
		return noErr(fmt.Errorf("audit failed: %s: %w", where, rep.Failure.Cause))
	}
	return nil
}
