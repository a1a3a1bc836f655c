package clicmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/diagnostic"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/fileio"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/monitor"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify/runner"
)

// ErrAlert is the error of a monitor run that reported an alert (exit 1).
var ErrAlert = errors.New("alert")

// Monitor is `writ monitor`: follow a published authority log, verified,
// and report the new records that touch what is watched (package
// monitor), exiting 1 when one is of a kind to alert on.
func Monitor() *cli.Command {
	return &cli.Command{
		Name: "monitor",
		Usage: "follow a published authority log (verified, as ledger sync is) and print each new record that touches a watched key, stream, artifact or machine, " +
			"and every root record; keep the position in --state; exit 1 when one is of a kind given to --alert",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Required: true, Usage: "the published log's `URL` (tlog-tiles, as writ ledger publish writes it), or a directory"},
			&cli.StringFlag{Name: "state", Required: true, Usage: "the monitor's state `FILE`: the position it reported up to, and the records it reported (made on the first run)"},
			&cli.StringFlag{Name: "cache", Usage: "keep the verified replica in `DIR` (default: the state file's name with .replica)"},
			&cli.StringFlag{Name: "vkey", Usage: "the log's checkpoint verifier `KEY` (writ ledger vkey): required on the first run"},
			&cli.StringFlag{Name: "trust-root", Usage: "refuse a log whose first root record does not have this `DIGEST`"},
			&cli.StringFlag{Name: "policy", Usage: "witness policy `FILE` (C2SP tlog-policy) the published checkpoint must meet"},
			&cli.DurationFlag{Name: "timeout", Value: tiles.DefaultTimeout, Usage: "cut off a request that takes longer than `DURATION`"},
			&cli.StringSliceFlag{Name: "watch-key", Usage: "a key to watch: its public key `FILE`, its key id, or a prefix of at least 8 hex digits (repeat)"},
			&cli.StringSliceFlag{Name: "watch-stream", Usage: "a stream `PATTERN` to watch (repeat)"},
			&cli.StringSliceFlag{Name: "watch-artifact", Usage: "an artifact `PATTERN` to watch (repeat)"},
			&cli.StringSliceFlag{Name: "watch-machine", Usage: "a machine `PATTERN` to watch (repeat)"},
			&cli.StringSliceFlag{Name: "alert", Usage: "exit 1 when a record of these `KINDS` that touches the watch appears: any, root, delegation, revocation, pin, downgrade, quarantine, issuer (comma-separated or repeated)"},
			&cli.BoolFlag{Name: "baseline", Usage: "on the first run, record the position and what touches the watch without printing it"},
		},
		Action: runMonitor,
	}
}

// runMonitor reads the flags, runs the monitor and prints each event.
func runMonitor(c *cli.Context) error {
	if err := cliflags.WantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	m, err := newMonitor(c)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := m.Run(ctx, func(e monitor.Event) error { return Emit(c, e, eventLine(e)) })
	switch {
	case errors.Is(err, monitor.ErrState):
		return exitcode.Input(err, "the state file is the monitor's own: remove it to start again from the whole log (with --baseline to print nothing the first time)")
	case errors.Is(err, monitor.ErrRewound):
		return exitcode.Refused(err, "keep the state file and the replica as evidence; the log's operators must explain the two trees")
	case errors.Is(err, monitor.ErrWatch):
		return exitcode.Usagef("%v", err)
	case err != nil:
		return SyncErr(err)
	}
	note := fmt.Sprintf("monitor: %s entries %d to %d: %d records reported, %d alerts", res.Origin, res.From, res.To, res.Events, res.Alerts)
	if res.Baseline {
		note = fmt.Sprintf("monitor: %s: baseline of %d entries recorded, nothing reported", res.Origin, res.To)
	}
	diagnostic.Write(c.App.ErrWriter, cliflags.WantJSON(c), diagnostic.Info, note)
	if res.Alerts > 0 {
		return exitcode.Refused(fmt.Errorf("%w: %d new records of a kind given to --alert (%s)", ErrAlert, res.Alerts, strings.Join(cliflags.CommaList(c.StringSlice("alert")), ",")))
	}
	return nil
}

// newMonitor builds the monitor the flags describe.
func newMonitor(c *cli.Context) (*monitor.Monitor, error) {
	vkey, err := cliflags.LogKey(c, "vkey")
	if err != nil {
		return nil, err
	}
	src, err := tiles.OpenSource(c.String("from"), c.Duration("timeout"))
	if err != nil {
		return nil, exitcode.Input(fmt.Errorf("--from: %w", err))
	}
	var policy *formats.Policy
	if p := c.String("policy"); p != "" {
		data, err := fileio.ReadWhole(c.App.Reader, p, formats.MaxPolicyBytes)
		if err != nil {
			return nil, err
		}
		if policy, err = formats.ParsePolicy(data); err != nil {
			return nil, exitcode.Input(fmt.Errorf("--policy: %w", err))
		}
	}
	cache := c.String("cache")
	if cache == "" {
		cache = c.String("state") + ".replica"
	}
	if _, err := os.Stat(cache); err != nil && vkey == nil {
		return nil, exitcode.Usagef("the first run makes the replica %s: give --vkey, the log's checkpoint verifier key (writ ledger vkey on the writer)", cache)
	}
	keys, err := watchKeys(c.StringSlice("watch-key"))
	if err != nil {
		return nil, err
	}
	m := &monitor.Monitor{State: c.String("state"), Baseline: c.Bool("baseline"),
		Replica: &runner.Replica{Dir: cache, Source: src, VKey: vkey, TrustRoot: c.String("trust-root"), Policy: policy, Witnesses: witness.NewClient(c.Duration("timeout"))},
		Watch: monitor.Watch{Keys: keys, Streams: c.StringSlice("watch-stream"), Artifacts: c.StringSlice("watch-artifact"),
			Machines: c.StringSlice("watch-machine"), Alert: cliflags.CommaList(c.StringSlice("alert"))}}
	if err := m.Watch.Check(); err != nil {
		return nil, exitcode.Usagef("%v", err)
	}
	return m, nil
}

// watchKeys reads each --watch-key: a public key file becomes its key
// id; anything else is taken as a key id or prefix (monitor.Watch.Check
// judges it).
func watchKeys(given []string) ([]string, error) {
	out := make([]string, len(given))
	for i, g := range given {
		out[i] = g
		if fi, err := os.Stat(g); err == nil && fi.Mode().IsRegular() {
			k, err := sign.LoadPublicKey(g)
			if err != nil {
				return nil, exitcode.Input(fmt.Errorf("--watch-key %s: %w", g, err))
			}
			out[i] = k.ID()
		}
	}
	return out, nil
}

// eventLine is an event for people: index, kind, what it says, what it
// touches, and ALERT when it is one.
func eventLine(e monitor.Event) string {
	s := fmt.Sprintf("entry %d %s %s: %s [touches %s; signed by %s]", e.Index, e.Kind, e.Digest, e.What, strings.Join(e.Touches, ", "), shortKeys(e.Signers))
	if e.Alert {
		s = "ALERT " + s
	}
	return s
}

// shortKeys is key ids shortened to 16 hex digits, comma-separated.
func shortKeys(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = shortKey(id)
	}
	return strings.Join(out, ",")
}
