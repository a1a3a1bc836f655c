package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

var decisionsLogFlag = &cli.BoolFlag{Name: "decisions", Usage: "the runner's decision log instead of the authority log"}

func fleetCommands() []*cli.Command {
	return []*cli.Command{
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
			Usage: "serve the log's C2SP tlog-tiles read API over HTTP, straight from the ledger, with /metrics",
			Flags: append([]cli.Flag{dirFlag, decisionsLogFlag,
				&cli.StringFlag{Name: "listen", Required: true, Usage: "`ADDR`ess to listen on (host:port; port 0 picks one)"},
				&cli.StringFlag{Name: "addr-file", Usage: "also write the address it listens on to `FILE`"}, maxAnswerFlag},
				httpLimitFlags()...),
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
// log, of the ledger at --dir for reading.
func openEitherLog(c *cli.Context) (*ledger.Log, string, error) {
	name := ledgerdir.AuthorityLog
	if c.Bool("decisions") {
		name = ledgerdir.DecisionsLog
	}
	l, err := ledgerdir.Dir(c.String("dir")).OpenLog(name)
	if errors.Is(err, ledgerdir.ErrNoDecisionLog) {
		err = logOpenErr(err, c.String("dir"))
	}
	return l, name, err
}

// openLogErr gives an error of openEitherLog its exit code: its own when
// it has one, else openErr's.
func openLogErr(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return openErr(err)
}

// publishedJSON is ledger publish's result under --json.
type publishedJSON struct {
	After      int64               `json:"after" doc:"the published tree size after publishing (entries)"`
	Before     int64               `json:"before" doc:"the published tree size before (entries)"`
	Bytes      int64               `json:"bytes" doc:"bytes written"`
	Files      int                 `json:"files" doc:"files written, the checkpoint included"`
	Log        string              `json:"log" doc:"which log: authority or decisions"`
	Origin     string              `json:"origin" doc:"the log's origin (the first line of its checkpoint)"`
	Witnessing *formats.Witnessing `json:"witnessing,omitempty" doc:"what --policy found"`
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
		return openLogErr(err)
	}
	defer l.Close()
	p, err := runner.PublishVerified(l, c.String("to"), runner.PublishOptions{Authority: name == "authority", Policy: policy,
		Progress: progressFor(c, "publishing", "tiles"), Verified: func() {
			if policy == nil {
				warnUnwitnessedPublish(c, l)
			}
		}})
	var unverified *runner.UnverifiedError
	switch {
	case errors.As(err, &unverified):
		return noErr(err, "run `writ ledger verify --dir "+c.String("dir")+"` for the evidence")
	case errors.Is(err, formats.ErrPolicyLog):
		return inputErr(fmt.Errorf("nothing published: --policy %s: %w", c.String("policy"), err), "give the policy of this log: its `log` line is the log's verifier key")
	case errors.Is(err, formats.ErrQuorum):
		return noErr(fmt.Errorf("nothing published: the %s log's checkpoint: %w", name, err),
			"collect the cosignatures first: `writ ledger checkpoint --refresh --policy "+c.String("policy")+" --dir "+c.String("dir")+"`")
	case errors.Is(err, publish.ErrPublish) || errors.Is(err, ledger.ErrInconsistent):
		return noErr(err, "--to must be empty, or hold an older publication of this same log")
	case err != nil:
		return err
	}
	out := publishedJSON{Log: name, Origin: l.Origin(), Before: p.Before, After: p.After, Files: p.Files, Bytes: p.Bytes, Witnessing: p.Witnessing}
	text := fmt.Sprintf("published %s log %s: %d → %d entries, %s, %d bytes, into %s", name, l.Origin(), p.Before, p.After, humanize.Plural(int64(p.Files), "file", "files"), p.Bytes, c.String("to"))
	if p.Witnessing != nil {
		text += "; " + humanize.Witnessed(*p.Witnessing)
	}
	return emit(c, out, text)
}

func ledgerSync(c *cli.Context) error {
	if err := wantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	vkey, err := vkeyValue(c, "vkey")
	if err != nil {
		return err
	}
	src, err := tiles.OpenSource(c.String("from"), c.Duration("timeout"))
	if err != nil {
		return inputErr(fmt.Errorf("--from: %w", err))
	}
	dir := c.String("dir")
	if _, err := os.Stat(filepath.Join(dir, ledgerdir.AuthorityDir)); err != nil && vkey == "" {
		return usageErr("%s holds no authority log yet: give --vkey (the log's checkpoint verifier key, `writ ledger vkey` on the writer) to create a replica", dir)
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
// compared with the replica, when it is not simply consistent.
func reportViews(c *cli.Context, r *runner.Replica) {
	for _, v := range r.Views {
		if v.Err != nil {
			diag(c, levelWarning, "%s's view of the log not compared (only the split-view check skips it): %s", v.Source, v.Err)
		}
	}
}

// syncedJSON is ledger sync's result under --json.
type syncedJSON struct {
	After      int64               `json:"after" doc:"entries the replica holds now"`
	Before     int64               `json:"before" doc:"entries the replica held before"`
	Bytes      int64               `json:"bytes" doc:"bytes fetched"`
	Origin     string              `json:"origin" doc:"the log's origin (the first line of its checkpoint)"`
	Refreshed  bool                `json:"refreshed" doc:"same tree, newer checkpoint stored"`
	Requests   int                 `json:"requests" doc:"files fetched, the checkpoint included"`
	RootHash   string              `json:"root_hash" doc:"hex"`
	Witnessing *formats.Witnessing `json:"witnessing,omitempty" doc:"what --policy found"`
}

func emitSynced(c *cli.Context, res replica.Synced) error {
	cost := fmt.Sprintf("%s, %d bytes", humanize.Plural(int64(res.Requests), "request", "requests"), res.Bytes)
	text := fmt.Sprintf("synced authority log %s: %d → %d entries, tree root %x (%s)",
		res.Checkpoint.Origin, res.Before, res.After, res.Checkpoint.Hash[:], cost)
	out := syncedJSON{Origin: res.Checkpoint.Origin, Before: res.Before, After: res.After,
		RootHash: hex.EncodeToString(res.Checkpoint.Hash[:]), Requests: res.Requests, Bytes: res.Bytes, Refreshed: res.Refreshed,
		Witnessing: res.Witnessing}
	if res.Before == res.After {
		text = fmt.Sprintf("authority log %s is up to date: %d entries, tree root %x (%s)",
			res.Checkpoint.Origin, res.After, res.Checkpoint.Hash[:], cost)
		if res.Refreshed {
			text += "; stored its newer checkpoint"
		}
	}
	if res.Witnessing != nil {
		text += "; " + humanize.Witnessed(*res.Witnessing)
	}
	return emit(c, out, text)
}

// syncErr gives a sync failure its exit code and evidence: 1 for what
// the published log or its entries fail, 2 for a source that cannot be
// read or a replica that cannot be opened.
func syncErr(err error) error {
	var ie *ledger.InconsistencyError
	var re *delegation.RecordError
	var sv *replica.SplitViewError
	switch {
	case errors.As(err, &sv):
		return noErr(fmt.Errorf("nothing synced: %w", err),
			append(evidenceAs(sv.InconsistencyError, "the published signed checkpoint:", sv.Source+"'s signed checkpoint:"),
				"treat the log as split: its key signed both; stop trusting it until its operators explain them")...)
	case errors.As(err, &ie):
		return noErr(fmt.Errorf("nothing synced: %w", err), evidence(ie)...)
	case errors.As(err, &re):
		return recordErr(fmt.Errorf("nothing synced: %w", err))
	case errors.Is(err, replica.ErrSourceLog), errors.Is(err, formats.ErrCheckpointSignature), errors.Is(err, formats.ErrMalformedCheckpoint),
		errors.Is(err, ledger.ErrTampered), errors.Is(err, verify.ErrRootUntrusted), errors.Is(err, ledger.ErrHistory):
		return noErr(fmt.Errorf("nothing synced: %w", err))
	case errors.Is(err, formats.ErrPolicyLog):
		return inputErr(fmt.Errorf("nothing synced: %w", err), "give the policy of this log: its `log` line is the log's verifier key")
	case errors.Is(err, formats.ErrQuorum):
		return noErr(fmt.Errorf("nothing synced: %w", err),
			"the writer collects its witnesses' cosignatures with `writ ledger checkpoint --refresh --policy`; sync again once they have cosigned",
			"if the writer asks other witnesses than this policy requires, the two policies must be made to agree")
	case errors.Is(err, tiles.ErrFetch):
		return inputErr(fmt.Errorf("nothing synced: %w", err), "check --from; a source that stalls or sends more than a file can hold is cut off")
	case errors.Is(err, ledger.ErrWrongKey):
		return inputErr(err)
	}
	return openErr(err)
}

// evidence gives both signed checkpoints of an inconsistency as hint
// lines, each line of a note on its own (escaped as every diagnostic is).
func evidence(ie *ledger.InconsistencyError) []string {
	return evidenceAs(ie, "the replica's signed checkpoint:", "the published signed checkpoint:")
}

// evidenceAs is evidence with the two checkpoints labelled trusted and
// found.
func evidenceAs(ie *ledger.InconsistencyError, trusted, found string) []string {
	var out []string
	for _, n := range []struct {
		what string
		note []byte
	}{{trusted, ie.TrustedSigned}, {found, ie.FoundSigned}} {
		if len(n.note) == 0 {
			continue
		}
		out = append(out, n.what)
		for _, line := range strings.Split(strings.TrimSuffix(string(n.note), "\n"), "\n") {
			out = append(out, "  "+humanize.OneLine(line))
		}
	}
	return out
}

// warnUnwitnessedPublish warns when the checkpoint about to be published
// carries fewer signatures than the one already published at --to: a
// witnessed publication replaced by an unwitnessed one stops every runner
// that syncs under a witness policy until cosignatures are collected.
func warnUnwitnessedPublish(c *cli.Context, l *ledger.Log) {
	old, err := tiles.ReadFile(filepath.Join(c.String("to"), "checkpoint"), formats.MaxCheckpointSize)
	if err != nil {
		return
	}
	signed, err := l.CosignedCheckpoint()
	if err != nil {
		return
	}
	if had, has := signatureLines(old), signatureLines(signed); has < had {
		diag(c, levelWarning, "the checkpoint published at %s carries %d signatures, this one %d: runners that sync under a witness policy will refuse it; publish with --policy after collecting cosignatures (`writ ledger checkpoint --refresh --policy FILE`)", c.String("to"), had, has)
	}
}

// signatureLines counts a signed note's signature lines (the log's and
// its witnesses'), without verifying them.
func signatureLines(note []byte) int {
	_, sigs, _ := strings.Cut(string(note), "\n\n")
	n := 0
	for _, line := range strings.Split(sigs, "\n") {
		if strings.HasPrefix(line, formats.SigLinePrefix) {
			n++
		}
	}
	return n
}
