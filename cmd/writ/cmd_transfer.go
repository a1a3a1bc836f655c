package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/transfer"
)

func transferCommand() *cli.Command {
	return &cli.Command{
		Name:  "transfer",
		Usage: "check received content against a digest computed elsewhere",
		Subcommands: []*cli.Command{{
			Name:      "verify",
			Usage:     "hash FILE (- for stdin) here with the algorithm --expect names (sha256, sha384, sha512) and compare; exit 0 on match, 1 on mismatch",
			ArgsUsage: "FILE",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "expect", Required: true, Usage: "the expected `DIGEST`, e.g. sha256:<64 hex>"},
				jsonFlag,
			},
			Action: transferVerify,
		}},
	}
}

func transferVerify(c *cli.Context) error {
	if err := wantArgs(c, 1, "one argument: the FILE received"); err != nil {
		return err
	}
	res, err := transfer.Check(c.App.Reader, c.Args().First(), c.String("expect"))
	var mm *transfer.MismatchError
	switch {
	case errors.Is(err, transfer.ErrDigestSyntax):
		return exitcode.Usagef("--expect: %v", err)
	case errors.As(err, &mm):
		if wantJSON(c) {
			emitSorted(c, res)
		}
		return exitcode.Refused(err)
	case err != nil && c.Args().First() != "-":
		return exitcode.Input(fmt.Errorf("FILE: %w", err))
	case err != nil:
		return exitcode.Input(err)
	}
	return emitSorted(c, res, "ok: "+res.Actual)
}

func downgradeCommand() *cli.Command {
	return &cli.Command{
		Name:  "downgrade",
		Usage: "sign a downgrade record (root threshold): runners may admit --artifact at the lower --version until it expires",
		Flags: []cli.Flag{
			keysFlag("private key `FILE` or PKCS#11 URI (pkcs11:token=T;object=O) of a root key (repeat up to the threshold)"),
			&cli.StringFlag{Name: "artifact", Required: true, Usage: "artifact `NAME`"},
			&cli.StringFlag{Name: "version", Required: true, Usage: "the lower version to allow"},
			&cli.StringFlag{Name: "reason", Required: true, Usage: "why, for the record"},
			&cli.StringFlag{Name: "expires", Value: "168h", Usage: "RFC 3339 time or duration from now"},
			outFlag, passphraseFileFlag, identityFlag, jsonFlag,
		},
		Action: func(c *cli.Context) error {
			now := time.Now()
			exp, err := parseTime("expires", c.String("expires"), now)
			if err != nil {
				return err
			}
			rec, err := transfer.NewDowngrade(c.String("artifact"), c.String("version"), c.String("reason"), now, exp)
			if err != nil {
				return fieldFlagErr(c, err)
			}
			return finishKeys(c, rec, c.StringSlice("key"), &downgradeResult{Artifact: rec.Artifact, Version: rec.Version})
		},
	}
}
