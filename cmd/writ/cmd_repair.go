package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/repair"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/verify/runner"
)

// repairCommand is `writ ledger repair`.
func repairCommand() *cli.Command {
	return &cli.Command{
		Name: "repair",
		Usage: "bring back a ledger whose store is damaged on disk, deleting nothing: each damaged log is moved into DIR/set-aside/STAMP/ and rebuilt from its files " +
			"that read back, kept only if every entry verifies against the log's signed checkpoint (else nothing changes: exit 1, restore with --from); --undo puts the last repair back",
		Flags: []cli.Flag{dirFlag, vkeyFlag, decisionsVKeyFlag,
			&cli.StringFlag{Name: "from", Usage: "restore from this export `FILE` instead (made by writ ledger export; imported with every check writ ledger import runs)"},
			trustRootFlag, policyFlag,
			&cli.BoolFlag{Name: "undo", Usage: "undo the last repair of DIR: put the stores it set aside back, and keep what it made in the set-aside directory"},
			jsonFlag},
		Action: ledgerRepair,
	}
}

func ledgerRepair(c *cli.Context) error {
	if err := wantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	dir := c.String("dir")
	if c.Bool("undo") {
		if c.IsSet("from") {
			return usageErr("--undo and --from: choose one")
		}
		return repairUndo(c, dir)
	}
	vkey, err := logKeyValue(c, "vkey")
	if err != nil {
		return err
	}
	dvkey, err := logKeyValue(c, "decisions-vkey")
	if err != nil {
		return err
	}
	policy, err := readPolicy(c)
	if err != nil {
		return err
	}
	if err := policyForLedger(c, policy, vkey, dir); err != nil {
		return err
	}
	res, err := runner.RepairLedger(dir, runner.RepairOptions{VKey: vkey, DecisionsVKey: dvkey,
		TrustRoot: c.String("trust-root"), Policy: policy, From: c.String("from")})
	if err != nil {
		return repairErr(c, dir, err)
	}
	return printRepair(c, dir, res)
}

// repairErr gives a refused repair its exit code and hints: 4 when a log
// is in use, 2 without a key to verify under, and for an export under
// another key than the directory's, the key to pass to trust it.
func repairErr(c *cli.Context, dir string, err error) error {
	switch {
	case errors.Is(err, ledger.ErrNotALog) || errors.Is(err, ledger.ErrLocked):
		return openErr(err)
	case errors.Is(err, repair.ErrNoVKey):
		return inputErr(err)
	case errors.Is(err, ledger.ErrTrust) && !c.IsSet("from") || errors.Is(err, formats.ErrQuorum):
		return noErr(fmt.Errorf("nothing changed: %w", err)) // a key, root or policy given does not hold
	case !c.IsSet("from") || errors.Is(err, ledger.ErrStoreDamaged):
		return err
	}
	var te *ledger.TrustError
	if errors.As(err, &te) && te.Rule == rules.VKeyMismatch {
		flag := "--vkey"
		if te.Log == ledgerdir.DecisionsDir {
			flag = "--decisions-vkey"
		}
		return noErr(fmt.Errorf("nothing changed: the export was not restored: %w", err),
			fmt.Sprintf("the export is not of the %s log %s holds (whose key is %s): restore an export of that log, or, if its key really changed, pass the export's key with %s KEY", te.Log, humanize.ShellQuote(dir), te.Expected, flag))
	}
	return noErr(fmt.Errorf("nothing changed: the export was not restored: %w", err))
}

// printRepair prints what a repair did (repair.Summarize), and how to
// undo it.
func printRepair(c *cli.Context, dir string, res *repair.RepairResult) error {
	s := repair.Summarize(res, dir, c.String("from"))
	if s.Warning != "" && !wantJSON(c) {
		defer fmt.Fprintf(c.App.ErrWriter, "writ: warning: %s\n", s.Warning)
	}
	return emit(c, s, s.Lines...)
}

// repairUndo undoes the last repair of dir and says what it did.
func repairUndo(c *cli.Context, dir string) error {
	res, err := repair.UndoRepair(dir)
	if errors.Is(err, repair.ErrNoRepair) {
		return inputErr(err)
	}
	if err != nil {
		return openErr(err)
	}
	return emit(c, res, res.Lines()...)
}
