package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/witness"
)

// policyFlag names a witness policy file (c2sp.org/tlog-policy).
var policyFlag = &cli.StringFlag{Name: "policy", Usage: "witness policy `FILE` (C2SP tlog-policy: log, witness, group and quorum lines): refuse a checkpoint its quorum did not cosign"}

// collectPolicyFlag is --policy on the writer's commands.
var collectPolicyFlag = &cli.StringFlag{Name: "policy", Usage: "witness policy `FILE` (C2SP tlog-policy): ask its witnesses (those with a URL) to cosign the new checkpoint; exit 1 if the quorum is not met"}

// witnessTimeoutFlag bounds each witness's answer.
var witnessTimeoutFlag = &cli.DurationFlag{Name: "witness-timeout", Value: ledger.DefaultWitnessTimeout, Usage: "wait at most `DURATION` for each witness's cosignature"}

// readPolicy parses the --policy file, or returns nil when none is given.
// A policy that does not parse is bad input (exit 2).
func readPolicy(c *cli.Context) (*formats.Policy, error) {
	path := c.String("policy")
	if !c.IsSet("policy") {
		return nil, nil
	}
	if path == "" {
		return nil, usageErr("--policy: give the policy FILE")
	}
	data, err := readWhole(c, path, formats.MaxPolicyBytes)
	if err != nil {
		return nil, err
	}
	p, err := formats.ParsePolicy(data)
	if err != nil {
		return nil, inputErr(fmt.Errorf("--policy %s: %w", path, err))
	}
	return p, nil
}

// collectCosignatures asks the policy's witnesses to cosign the log's
// latest checkpoint and reports each answer on stderr. A quorum not met
// is a no (exit 1): whatever was appended stays, and the hint says how
// to collect again.
func collectCosignatures(c *cli.Context, l *ledger.Log, p *formats.Policy) (*ledger.Collected, error) {
	if p == nil {
		return nil, nil
	}
	if c.Duration("witness-timeout") <= 0 {
		return nil, usageErr("--witness-timeout %s: must be positive", c.Duration("witness-timeout"))
	}
	if len(p.SubmissionWitnesses()) == 0 && p.Quorum != "none" {
		return nil, inputErr(fmt.Errorf("--policy %s: no witness has a URL to ask for cosignatures", c.String("policy")))
	}
	res, err := l.CollectCosignatures(context.Background(), p, witness.NewClient(c.Duration("witness-timeout")), c.Duration("witness-timeout"), time.Now)
	for _, w := range res.Witnesses {
		if w.Err != nil {
			fmt.Fprintf(c.App.ErrWriter, "writ: witness %s: %s\n", w.Name, oneLine(w.Err.Error()))
			continue
		}
		resent := ""
		if w.Resent {
			resent = fmt.Sprintf(", after resending from the size it held (%d)", w.Old)
		}
		fmt.Fprintf(c.App.ErrWriter, "writ: witness %s cosigned size %d in %s%s\n", w.Name, res.Checkpoint.Size, w.Elapsed.Round(time.Millisecond), resent)
	}
	hint := "run `writ ledger checkpoint --refresh --policy " + c.String("policy") + " --dir " + c.String("dir") + "` once the witnesses answer; runners with this policy refuse the ledger until then"
	switch {
	case errors.Is(err, formats.ErrQuorum):
		return &res, noErr(fmt.Errorf("the new checkpoint (size %d) is not witnessed: %w", res.Checkpoint.Size, err), hint)
	case errors.Is(err, ledger.ErrHeadMoved):
		return &res, noErr(fmt.Errorf("collecting cosignatures: %w (another writer signed a newer checkpoint meanwhile)", err), hint)
	case err != nil:
		return &res, noErr(fmt.Errorf("collecting cosignatures: %w", err), hint)
	}
	return &res, nil
}

// witnessedText describes a met quorum for the text output.
func witnessedText(w formats.Witnessing) string {
	var names []string
	for _, c := range w.Cosigned {
		names = append(names, c.Name)
	}
	if w.Quorum == "none" {
		return "no witness required (quorum none)"
	}
	s := fmt.Sprintf("witnessed by %s (quorum %s)", strings.Join(names, ", "), w.Quorum)
	if !w.Time.IsZero() {
		s += fmt.Sprintf(" at %s", w.Time.UTC().Format(time.RFC3339))
	}
	return s
}
