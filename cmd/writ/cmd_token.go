package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/token"
	"github.com/writ-ledger/writ/verify"
)

func tokenCommand() *cli.Command {
	return &cli.Command{
		Name:  "token",
		Usage: "bearer tokens from an external identity provider",
		Subcommands: []*cli.Command{{
			Name:      "verify",
			Usage:     "verify a JWS bearer token against a root-signed issuer record and the issuer's keys (exit 0 valid, 1 invalid, 2 malformed)",
			ArgsUsage: "TOKEN|-",
			Description: "The issuer's key set is fetched from the record's jwks_uri over https, with no redirect, no proxy,\n" +
				"5 s per stage and 1 MiB at most. Loopback and private addresses are dialled only for the exact\n" +
				"jwks_uri of the issuer's root-signed, unrevoked record (re-verified at dial time); link-local,\n" +
				"multicast and unspecified addresses never. Pass the token as - to read it from stdin (a token\n" +
				"on the command line is visible to other users in the process list). The token is never printed.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "ledger", Usage: "the ledger `DIR` holding the issuer record"},
				&cli.StringFlag{Name: "issuer", Usage: "the issuer `URL` (the record's issuer and the token's iss)"},
				&cli.StringFlag{Name: "audience", Usage: "require this `AUD` (one of the record's audiences); else any of them"},
				&cli.StringFlag{Name: "ca-file", Usage: "add the TLS roots in this PEM `FILE` for the key fetch (an internal provider); it opens no address"},
				vkeyFlag, jsonFlag,
			},
			Action: verifyToken,
		}},
	}
}

func verifyToken(c *cli.Context) error {
	if err := wantArgs(c, 1, "one argument: the TOKEN, or - for stdin"); err != nil {
		return err
	}
	dir, issuer := c.String("ledger"), c.String("issuer")
	if dir == "" || issuer == "" {
		return exitcode.Usagef("--ledger and --issuer are required (see writ token verify --help)")
	}
	vkey, err := logKeyValue(c, "vkey")
	if err != nil {
		return err
	}
	var bundles [][]byte
	if p := c.String("ca-file"); p != "" {
		if p == "-" {
			return exitcode.Usagef("--ca-file -: the TLS roots are read from a file; stdin is for the token")
		}
		pem, over, err := readInput(c, p, token.MaxCAFile)
		if err != nil {
			return err
		}
		if over {
			return exitcode.Input(fmt.Errorf("--ca-file %s: larger than %d bytes, the limit for a PEM file of TLS roots", p, token.MaxCAFile))
		}
		bundles = append(bundles, pem)
	}
	roots, err := token.Roots(bundles...)
	if err != nil {
		return exitcode.Usagef("--ca-file %s: %v", c.String("ca-file"), err)
	}
	raw := []byte(c.Args().First())
	if c.Args().First() == "-" {
		if raw, err = readWhole(c, "-", token.MaxToken); err != nil {
			return err
		}
	}
	res, err := verify.VerifyToken(ledgerdir.Dir(dir), verify.Trust{VKey: vkey}, roots, issuer, c.String("audience"), string(raw))
	var ae *verify.AuthorityError
	switch {
	case errors.As(err, &ae):
		return failure.Open(ae.Err)
	case errors.Is(err, token.ErrMalformed):
		return exitcode.Input(err)
	case err != nil:
		return exitcode.Refused(err)
	}
	return emitSorted(c, res, fmt.Sprintf("valid: token from %s for %s, audience %s, expires %s (key %s)", res.Issuer, humanize.OrNone(res.Subject),
		strings.Join(res.Audience, ","), res.Expires, humanize.OrNone(res.KeyID)))
}
