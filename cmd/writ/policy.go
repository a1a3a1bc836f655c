package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/witness"
)

// policyFlag names a witness policy file (c2sp.org/tlog-policy).
var policyFlag = &cli.StringFlag{Name: "policy", Usage: "witness policy `FILE` (C2SP tlog-policy: log, witness, group and quorum lines): refuse a checkpoint its quorum did not cosign"}

// collectPolicyFlag is --policy on the writer's commands.
var collectPolicyFlag = &cli.StringFlag{Name: "policy", Usage: "witness policy `FILE` (C2SP tlog-policy): ask its witnesses (those with a URL) to cosign the new checkpoint; exit 1 if the quorum is not met"}

// witnessTimeoutFlag bounds each witness's answer.
var witnessTimeoutFlag = &cli.DurationFlag{Name: "witness-timeout", Value: publish.DefaultWitnessTimeout, Usage: "wait at most `DURATION` for each witness's cosignature"}

// readPolicy parses the --policy file, or returns nil when none is given.
// A policy that does not parse is bad input (exit 2).
func readPolicy(c *cli.Context) (*formats.Policy, error) {
	path := c.String("policy")
	if !c.IsSet("policy") {
		return nil, nil
	}
	if path == "" {
		return nil, exitcode.Usagef("--policy: give the policy FILE")
	}
	data, err := readWhole(c, path, formats.MaxPolicyBytes)
	if err != nil {
		return nil, exitcode.Input(fmt.Errorf("--policy: %w", err))
	}
	p, err := formats.ParsePolicy(data)
	if err != nil {
		return nil, exitcode.Input(fmt.Errorf("--policy %s: %w", path, err))
	}
	return p, nil
}

// policyForLedger refuses, as bad input (exit 2), a policy whose log
// lines do not name the log of key k, or else (k nil) the authority log of
// the ledger at dir (ledgerdir.Dir.CheckPolicy): such a policy could
// never be met, and a writer would sign a checkpoint before finding out.
func policyForLedger(c *cli.Context, p *formats.Policy, k *formats.LogKey, dir string) error {
	if err := ledgerdir.Dir(dir).CheckPolicy(p, k); err != nil {
		return exitcode.Input(fmt.Errorf("--policy %s: %w: its log lines name other logs", c.String("policy"), err),
			"give the policy of this log: its `log` line is the log's verifier key (`writ ledger vkey`)")
	}
	return nil
}

// collectable maps publish.Collectable's refusals of --policy and
// --witness-timeout: a timeout that is not positive is bad usage, a
// policy no collection could meet bad input (exit 2). The writer's
// commands call it before they sign or append anything, so that such a
// policy changes nothing stored.
func collectable(c *cli.Context, p *formats.Policy) error {
	switch err := publish.Collectable(p, c.Duration("witness-timeout")); {
	case errors.Is(err, publish.ErrWitnessTimeout):
		return exitcode.Usagef("--witness-timeout %s: must be positive", c.Duration("witness-timeout"))
	case errors.Is(err, publish.ErrNoWitnessURL):
		return exitcode.Input(fmt.Errorf("--policy %s: %w", c.String("policy"), err))
	case err != nil:
		return exitcode.Input(fmt.Errorf("--policy %s: %w", c.String("policy"), err))
	}
	return nil
}

// collectCosignatures asks the policy's witnesses to cosign the log's
// latest checkpoint and reports each answer on stderr
// (publish.Collected.Answers). A quorum not met is a no (exit 1):
// whatever was appended stays, and the hint says how to collect again.
// The caller checked the policy with collectable before appending or
// signing.
func collectCosignatures(c *cli.Context, l *ledger.Log, p *formats.Policy) (*publish.Collected, error) {
	if err := collectable(c, p); err != nil || p == nil {
		return nil, err
	}
	timeout := c.Duration("witness-timeout")
	res, err := publish.CollectCosignatures(context.Background(), l, p, witness.NewClient(timeout), timeout, time.Now)
	for _, a := range res.Answers(timeout) {
		level := levelWarning
		if a.Cosigned {
			level = levelInfo
		}
		diag(c, level, "%s", a.Text)
	}
	if err != nil {
		return &res, exitcode.Refused(res.Refusal(err), res.Hints(c.String("policy"), c.String("dir"))...)
	}
	return &res, nil
}
