package main

import (
	"errors"
	"slices"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
)

func authorityCommand() *cli.Command {
	return &cli.Command{
		Name:  "authority",
		Usage: "answer questions about authority in a ledger",
		Subcommands: []*cli.Command{{
			Name:  "explain",
			Usage: "may this key do this action, on this stream, machine or artifact, at this time? yes with the chain, or no with the rule",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "ledger", Required: true, Usage: "ledger `DIR`"},
				&cli.StringSliceFlag{Name: "key", Required: true, Usage: "the public key `FILE` (one)"},
				&cli.StringFlag{Name: "action", Required: true, Usage: "instruct, pin, delegate, revoke, quarantine or issuer"},
				&cli.StringFlag{Name: "stream"}, &cli.StringFlag{Name: "machine"}, &cli.StringFlag{Name: "artifact"},
				&cli.StringFlag{Name: "at", Usage: "RFC 3339 time or duration from now (default: now)"},
				vkeyFlag, jsonFlag,
			},
			Action: explain,
		}},
	}
}

func explain(c *cli.Context) error {
	path, err := oneKey(c, "authority is explained for one key at a time")
	if err != nil {
		return err
	}
	if a := schemas.Action(c.String("action")); !slices.Contains(schemas.Actions, a) {
		return exitcode.Usagef("--action %q: one of %v", a, schemas.Actions)
	}
	key, err := sign.LoadPublicKey(path)
	if err != nil {
		return exitcode.Input(err)
	}
	at := time.Now()
	if s := c.String("at"); s != "" {
		if at, err = parseTime("at", s, at); err != nil {
			return err
		}
	}
	vkey, err := logKeyValue(c, "vkey")
	if err != nil {
		return err
	}
	req := delegation.Request{Key: key, Action: schemas.Action(c.String("action")), Stream: c.String("stream"), Machine: c.String("machine"), Artifact: c.String("artifact"), At: at}
	e, err := verify.Explain(ledgerdir.Dir(c.String("ledger")), verify.Trust{VKey: vkey}, req)
	var ae *verify.AuthorityError
	var d *delegation.Denial
	switch {
	case errors.As(err, &ae):
		return failure.OpenLog(ae.Err, "")
	case errors.As(err, &d):
		if err := emitSorted(c, e, e.Lines()...); err != nil {
			return err
		}
		return &exitcode.Error{Code: exitcode.No, Err: d, Silent: true}
	case err != nil:
		return err // Explain refuses only with a *Denial
	}
	return emitSorted(c, e, e.Lines()...)
}
