package clicmd

import (
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/inspect"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/internal/fileio"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/verify"
)

// InspectLedgerFlags are the flags that name the ledger inspect reads
// authority from: --ledger and --vkey.
func InspectLedgerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ledger", Usage: "also say, from this ledger `DIR`'s verified authority log, whether each signer may do the record's act now, and under which delegation"},
		&cli.StringFlag{Name: "vkey", Usage: "with --ledger: trust only this checkpoint verifier `KEY` instead of the one stored in the ledger"},
	}
}

// Inspect is `writ inspect FILE`: what a writ file is, field by field,
// in text or JSON (inspect.Describe), and with --ledger the authority of
// each signer (inspect.Authority).
func Inspect() *cli.Command {
	return &cli.Command{
		Name: "inspect",
		Usage: "say what a writ file is and what it states, field by field, without verifying it: a signed record, an unsigned instruction, " +
			"a receipt, a checkpoint, an export's header, a public key or a log verifier key",
		ArgsUsage: "FILE|-",
		Flags:     InspectLedgerFlags(),
		Action: func(c *cli.Context) error {
			if err := cliflags.WantArgs(c, 1, "one argument: the FILE to inspect, or - for stdin"); err != nil {
				return err
			}
			data, _, err := fileio.ReadInput(c.App.Reader, c.Args().First(), inspect.MaxInspect)
			if err != nil {
				return err
			}
			vkey, err := cliflags.LogKey(c, "vkey")
			if err != nil {
				return err
			}
			return InspectBytes(c, data, -1, c.String("ledger"), vkey)
		},
	}
}

// InspectBytes describes data (inspect.Describe), adds the authority of
// its signers from the ledger at dir ("" for none; trusted under vkey,
// nil for the key it stores), and prints it. index >= 0 says data is
// that entry of the ledger at dir, read from its verified log. Errors: bad input
// (exit 2) for bytes inspect does not read, wrapping
// inspect.ErrUnknownFormat or inspect.ErrMalformed; the ledger's as
// failure.OpenLog classifies them.
func InspectBytes(c *cli.Context, data []byte, index int64, dir string, vkey *formats.LogKey) error {
	d, err := inspect.Describe(data, time.Local)
	if err != nil {
		return exitcode.Input(err)
	}
	if dir != "" {
		a, err := verify.OpenAuthority(ledgerdir.Dir(dir), verify.Trust{VKey: vkey}, nil)
		if err != nil {
			return failure.OpenLog(err, dir)
		}
		defer a.Log.Close()
		if err := inspect.Authority(d, data, index, a.State, time.Now()); err != nil {
			return err
		}
	}
	return Emit(c, d, d.Lines()...)
}
