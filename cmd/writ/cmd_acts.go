package main

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/clicmd"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/schemas"
)

func revokeCommand() *cli.Command {
	return &cli.Command{
		Name:  "revoke",
		Usage: "sign a revocation of a key (by key id) or a delegation, pin or issuer record (by record digest); permanent",
		Flags: []cli.Flag{
			keysFlag("private key `FILE` or PKCS#11 URI (pkcs11:token=T;object=O): the root threshold's keys, or one key that holds revoke and could have issued the target"),
			&cli.StringFlag{Name: "target", Required: true, Usage: "key id (64 hex), record digest (sha256:...), or a public key file or record file to take it from"},
			&cli.StringFlag{Name: "reason", Required: true, Usage: "why, for the record (1 to 256 bytes)"},
			outFlag, passphraseFileFlag, identityFlag, jsonFlag, clicmd.LedgerCheckFlag,
		},
		Action: func(c *cli.Context) error {
			target, err := revocationTarget(c, c.String("target"))
			if err != nil {
				return err
			}
			rec, err := delegation.NewRevocation(target, c.String("reason"), time.Now())
			if err != nil {
				return fieldFlagErr(c, err)
			}
			return finishKeys(c, rec, c.StringSlice("key"), &revokeResult{Target: rec.Target})
		},
	}
}

// revocationTarget accepts a key id or digest as is, or reads a file: a
// PEM public key gives its key id, any other file (a signed record) the
// digest of its bytes. A file over delegation.MaxRevocationTarget bytes is bad input.
func revocationTarget(c *cli.Context, v string) (string, error) {
	if schemas.ValidKeyID(v) || schemas.ValidDigest(v) {
		return v, nil
	}
	if _, err := os.Stat(v); err != nil || v == "-" {
		return "", exitcode.Usagef("--target %q: not a key id, a record digest, or a readable file", v)
	}
	data, over, err := readInput(c, v, delegation.MaxRevocationTarget)
	if err != nil {
		return "", err
	}
	if over {
		return "", exitcode.Input(fmt.Errorf("--target %s: larger than %d bytes, the most a signed record or a public key file can be", v, delegation.MaxRevocationTarget))
	}
	target, err := delegation.RevocationTarget(data)
	if err != nil {
		return "", exitcode.Input(fmt.Errorf("--target %s: %w", v, err)) // a private key file: name the mix-up
	}
	return target, nil
}

func issuerCommand() *cli.Command {
	return &cli.Command{
		Name:  "issuer",
		Usage: "sign an issuer record (root threshold): an external token issuer, its exact jwks_uri and audiences",
		Flags: []cli.Flag{
			keysFlag("private key `FILE` or PKCS#11 URI (pkcs11:token=T;object=O) of a root key (repeat up to the threshold)"),
			&cli.StringFlag{Name: "issuer", Required: true, Usage: "the tokens' iss, an https `URL`"},
			&cli.StringFlag{Name: "jwks-uri", Required: true, Usage: "the exact https `URL` of the issuer's key set"},
			&cli.StringSliceFlag{Name: "audience", Required: true, Usage: "an accepted aud (repeat)"},
			outFlag, passphraseFileFlag, identityFlag, jsonFlag, clicmd.LedgerCheckFlag,
		},
		Action: func(c *cli.Context) error {
			rec, err := delegation.NewIssuer(c.String("issuer"), c.String("jwks-uri"), c.StringSlice("audience"), time.Now())
			if err != nil {
				return fieldFlagErr(c, err)
			}
			return finishKeys(c, rec, c.StringSlice("key"), &issuerResult{Issuer: rec.Issuer})
		},
	}
}

func quarantineCommand() *cli.Command {
	return &cli.Command{
		Name:  "quarantine",
		Usage: "sign a quarantine (drain: the machine is admitted no work) or, with --lift, its end",
		Flags: []cli.Flag{
			keysFlag("private key `FILE` or PKCS#11 URI (pkcs11:token=T;object=O): the root threshold's keys (repeat), or one key holding quarantine for the machine"),
			&cli.StringFlag{Name: "machine", Required: true, Usage: "machine `NAME`"},
			&cli.StringFlag{Name: "until", Usage: "RFC 3339 time or duration from now (default: until lifted)"},
			&cli.BoolFlag{Name: "lift", Usage: "end the machine's quarantine"},
			outFlag, passphraseFileFlag, identityFlag, jsonFlag, clicmd.LedgerCheckFlag,
		},
		Action: func(c *cli.Context) error {
			now := time.Now()
			var until time.Time
			var err error
			if u := c.String("until"); u != "" {
				if c.Bool("lift") {
					return exitcode.Usagef("--until and --lift do not go together")
				}
				if until, err = parseTime("until", u, now); err != nil {
					return err
				}
			}
			rec, err := delegation.NewQuarantine(c.String("machine"), until, c.Bool("lift"), now)
			if err != nil {
				return fieldFlagErr(c, err)
			}
			what := "quarantine"
			if rec.Lift {
				what = "lift"
			}
			return finishKeys(c, rec, c.StringSlice("key"), &quarantineResult{Machine: rec.Machine, Act: what})
		},
	}
}
