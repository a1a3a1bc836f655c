package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/schemas"
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
	expect := c.String("expect")
	alg, _, err := transfer.ParseDigest(expect)
	if err != nil {
		return usageErr("--expect: %v", err)
	}
	var actual string
	if name := c.Args().First(); name == "-" {
		// stdin: hashed as it streams, never held in memory.
		if actual, _, err = transfer.DigestReader(c.App.Reader, alg); err != nil {
			return inputErr(fmt.Errorf("reading stdin: %w", err))
		}
		if actual != expect {
			err = &transfer.MismatchError{Path: "stdin", Expected: expect, Actual: actual}
		}
	} else {
		actual, err = transfer.Compare(name, expect)
	}
	var mm *transfer.MismatchError
	switch {
	case errors.As(err, &mm):
		if wantJSON(c) {
			emitSorted(c, transferResult{Match: false, Expected: mm.Expected, Actual: mm.Actual})
		}
		return noErr(err)
	case err != nil:
		return inputErr(fmt.Errorf("FILE: %w", err))
	}
	return emitSorted(c, transferResult{Match: true, Expected: c.String("expect"), Actual: actual}, "ok: "+actual)
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
			v, err := transfer.ParseVersion(c.String("version"))
			if err != nil {
				return usageErr("%v", err)
			}
			rec := &schemas.Downgrade{V: schemas.SchemaVersion, Artifact: c.String("artifact"), Version: v, Reason: c.String("reason"),
				IssuedAt: now.Unix(), Expires: exp.Unix()}
			if err := rec.Validate(); err != nil {
				return fieldFlagErr(c, err)
			}
			keys, err := loadSigningKeys(c, c.StringSlice("key"))
			if err != nil {
				return err
			}
			return finish(c, rec, keys, &downgradeResult{Artifact: rec.Artifact, Version: rec.Version})
		},
	}
}

// provisionList reads --provision SRC=.provision/NAME values: each source
// is hashed (SHA-256) and sized here, sorted by destination.
func provisionList(values []string) ([]schemas.Provision, error) {
	var out []schemas.Provision
	for _, v := range values {
		src, dest, ok := strings.Cut(v, "=")
		if !ok || src == "" {
			return nil, usageErr("--provision %q: want SRC=.provision/NAME", v)
		}
		d, n, err := transfer.DigestFile(src)
		if err != nil {
			return nil, inputErr(fmt.Errorf("--provision %s: %w", src, err))
		}
		out = append(out, schemas.Provision{Dest: filepath.ToSlash(dest), Digest: d, Size: uint64(n)})
	}
	slices.SortFunc(out, func(a, b schemas.Provision) int { return strings.Compare(a.Dest, b.Dest) })
	for i := 1; i < len(out); i++ {
		if out[i].Dest == out[i-1].Dest {
			return nil, usageErr("--provision names %s twice", out[i].Dest)
		}
	}
	return out, nil
}
