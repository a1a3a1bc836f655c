package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

func auditCommand() *cli.Command {
	return &cli.Command{
		Name:  "audit",
		Usage: "verify a ledger end to end, then report its decisions by verdict and rule",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ledger", Required: true, Usage: "ledger `DIR`"},
			vkeyFlag,
			decisionsVKeyFlag,
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
	rep, err := verify.Audit(c.String("ledger"), verify.AuditOptions{AuthorityVKey: vkey, DecisionsVKey: dvkey})
	if err != nil {
		return openErr(err)
	}
	if wantJSON(c) {
		if err := emit(c, rep); err != nil {
			return err
		}
	} else if rep.OK {
		lines := []string{fmt.Sprintf("ok: %d entries verified (%d authority, %d decisions)", rep.EntriesVerified, rep.AuthorityEntries, rep.Decisions)}
		if rep.Authority != nil {
			lines = append(lines, fmt.Sprintf("authority checkpoint: %s size %d root %s", rep.Authority.Origin, rep.Authority.Size, rep.Authority.RootHash))
		}
		if rep.DecisionLog != nil {
			lines = append(lines, fmt.Sprintf("decision checkpoint: %s size %d root %s", rep.DecisionLog.Origin, rep.DecisionLog.Size, rep.DecisionLog.RootHash))
		}
		lines = append(lines, fmt.Sprintf("admitted although a rule failed (enforce would refuse): %d", rep.WouldRefuse))
		lines = append(lines, "decisions by verdict:")
		for _, v := range schemas.Verdicts {
			lines = append(lines, fmt.Sprintf("  %-18s %d", v, rep.ByVerdict[v]))
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
		if err := emit(c, nil, lines...); err != nil {
			return err
		}
	}
	if !rep.OK {
		where := rep.Failure.Log + " log"
		if rep.Failure.Index >= 0 {
			where += fmt.Sprintf(" entry %d", rep.Failure.Index)
		}
		return noErr(fmt.Errorf("audit failed: %s: %s", where, strings.TrimSpace(rep.Failure.Error)))
	}
	return nil
}
