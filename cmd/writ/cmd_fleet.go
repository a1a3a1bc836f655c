package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/clicmd"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/verify/runner"
)

var decisionsLogFlag = &cli.BoolFlag{Name: "decisions", Usage: "the runner's decision log instead of the authority log"}

func fleetCommands() []*cli.Command {
	return []*cli.Command{
		migrateCommand,
		{
			Name:  "publish",
			Usage: "write the log as C2SP tlog-tiles static files into --to (incremental; the checkpoint last), for any web server or CDN to serve",
			Flags: []cli.Flag{dirFlag, decisionsLogFlag,
				&cli.StringFlag{Name: "to", Required: true, Usage: "output `DIR`ectory (created; an older publication of the same log is extended)"},
				&cli.StringFlag{Name: "policy", Usage: "witness policy `FILE` (C2SP tlog-policy): publish only a checkpoint its quorum cosigned (exit 1 otherwise)"}, jsonFlag},
			Action: ledgerPublish,
		},
		{
			Name:  "serve",
			Usage: "serve the log's C2SP tlog-tiles read API over HTTP, straight from the ledger, with /metrics; with --write, also take records to append (the writer service)",
			Flags: append([]cli.Flag{dirFlag, decisionsLogFlag,
				&cli.StringFlag{Name: "listen", Required: true, Usage: "`ADDR`ess to listen on (host:port; port 0 picks one)"},
				&cli.StringFlag{Name: "addr-file", Usage: "also write the address it listens on to `FILE`"}, cliflags.MaxAnswer},
				append(cliflags.HTTPLimits(), append(append(cliflags.Writer(), cliflags.Engine(false)...), witnessTimeoutFlag, passphraseFileFlag, identityFlag)...)...),
			Action: ledgerServe,
		},
		{
			Name:  "sync",
			Usage: "grow (or create) a verified replica of an authority log from its published tiles: exit 0 synced, 1 refused, 2 bad input or unreachable source",
			Flags: []cli.Flag{dirFlag,
				&cli.StringFlag{Name: "from", Required: true, Usage: "the published log: an https:// `URL`, http:// on loopback, or a directory"},
				&cli.StringFlag{Name: "vkey", Usage: "the log's checkpoint verifier `KEY` (required to create a replica; else must be the replica's)"},
				trustRootFlag, policyFlag,
				&cli.DurationFlag{Name: "watch", Usage: "keep syncing every `DURATION` (backing off on errors) until interrupted"},
				&cli.DurationFlag{Name: "timeout", Value: tiles.DefaultTimeout, Usage: "cut off a request that takes longer than `DURATION`"},
				jsonFlag},
			Action: ledgerSync,
		},
	}
}

// openEitherLog opens the authority log, or with --decisions the decision
// log, of the ledger at --dir for reading; an error carries its exit
// code (failure.OpenLog).
func openEitherLog(c *cli.Context) (*ledger.Log, string, error) {
	name := ledgerdir.AuthorityLog
	if c.Bool("decisions") {
		name = ledgerdir.DecisionsLog
	}
	l, err := ledgerdir.Dir(c.String("dir")).OpenLog(name)
	if err != nil {
		return nil, name, failure.OpenLog(err, c.String("dir"))
	}
	return l, name, nil
}

func ledgerPublish(c *cli.Context) error {
	if err := wantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	policy, err := readPolicy(c)
	if err != nil {
		return err
	}
	l, name, err := openEitherLog(c)
	if err != nil {
		return err
	}
	defer l.Close()
	p, err := runner.PublishVerified(l, c.String("to"), runner.PublishOptions{Authority: name == "authority", Policy: policy,
		Progress: progressFor(c, "publishing", "tiles"), Unwitnessed: func(had, has int) {
			diag(c, levelWarning, "the checkpoint published at %s carries %d signatures, this one %d: runners that sync under a witness policy will refuse it; publish with --policy after collecting cosignatures (`writ ledger checkpoint --refresh --policy FILE`)", c.String("to"), had, has)
		}})
	var unverified *runner.UnverifiedError
	switch {
	case errors.As(err, &unverified):
		return exitcode.Refused(err, "run `writ ledger verify --dir "+c.String("dir")+"` for the evidence")
	case errors.Is(err, formats.ErrPolicyLog):
		return exitcode.Input(fmt.Errorf("nothing published: --policy %s: %w", c.String("policy"), err), "give the policy of this log: its `log` line is the log's verifier key")
	case errors.Is(err, formats.ErrQuorum):
		return exitcode.Refused(fmt.Errorf("nothing published: the %s log's checkpoint: %w", name, err),
			"collect the cosignatures first: `writ ledger checkpoint --refresh --policy "+c.String("policy")+" --dir "+c.String("dir")+"`")
	case errors.Is(err, publish.ErrPublish) || errors.Is(err, ledger.ErrInconsistent):
		return exitcode.Refused(err, "--to must be empty, or hold an older publication of this same log")
	case err != nil:
		return err
	}
	out := p.Result(name, l.Origin())
	return emit(c, out, out.Text(c.String("to")))
}

func ledgerSync(c *cli.Context) error {
	if err := wantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	vkey, err := logKeyValue(c, "vkey")
	if err != nil {
		return err
	}
	src, err := tiles.OpenSource(c.String("from"), c.Duration("timeout"))
	if err != nil {
		return exitcode.Input(fmt.Errorf("--from: %w", err))
	}
	dir := c.String("dir")
	if _, err := os.Stat(filepath.Join(dir, ledgerdir.AuthorityDir)); err != nil && vkey == nil {
		return exitcode.Usagef("%s holds no authority log yet: give --vkey (the log's checkpoint verifier key, `writ ledger vkey` on the writer) to create a replica", dir)
	}
	policy, err := readPolicy(c)
	if err != nil {
		return err
	}
	r := &runner.Replica{Dir: dir, Source: src, VKey: vkey, TrustRoot: c.String("trust-root"), Policy: policy,
		Witnesses: witness.NewClient(c.Duration("timeout")), Progress: progressFor(c, "syncing", "entries")}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	every := c.Duration("watch")
	if every <= 0 {
		res, err := r.Sync(ctx)
		reportViews(c, r)
		if err != nil {
			return syncErr(err)
		}
		return emitSynced(c, res)
	}
	diag(c, levelInfo, "syncing %s from %s every %s", dir, src, every)
	return r.Watch(ctx, every, runner.WatchHooks{
		Synced: func(res replica.Synced) error { return emitSynced(c, res) },
		Failed: func(err error, next time.Duration) {
			diag(c, levelWarning, "sync: %v; next try in %s", syncErr(err), next)
		},
		After: func() { reportViews(c, r) },
	})
}

// reportViews prints, on stderr, each witness's view the last sync
// compared with the replica, when it is not simply consistent, and the
// note of a replica state that was replayed whole (runner.Replica.Note).
func reportViews(c *cli.Context, r *runner.Replica) {
	if r.Note != "" {
		diag(c, levelNote, "%s", r.Note)
	}
	for _, v := range r.Views {
		if v.Err != nil {
			diag(c, levelWarning, "%s's view of the log not compared (only the split-view check skips it): %s", v.Source, v.Err)
		}
	}
}

func emitSynced(c *cli.Context, res replica.Synced) error {
	return emit(c, res.Result(), res.Text())
}

// syncErr is clicmd.SyncErr: a sync failure with its exit code and
// evidence.
func syncErr(err error) error { return clicmd.SyncErr(err) }
