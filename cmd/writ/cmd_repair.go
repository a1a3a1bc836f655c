package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/ledger/repair"
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
			return exitcode.Usagef("--undo and --from: choose one")
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

// repairErr gives a refused repair (runner.ClassifyRepair) its exit
// code and hints: 4 when a log is in use, 2 without a key to verify
// under, and for an export under another key than the directory's, the
// key to pass to trust it.
func repairErr(c *cli.Context, dir string, err error) error {
	switch f := runner.ClassifyRepair(err, dir, c.IsSet("from")); f.Kind {
	case runner.FailNotOpened:
		return failure.Open(f.Err)
	case runner.FailBadInput:
		return exitcode.Input(f.Err)
	case runner.FailRefused:
		return exitcode.Refused(f.Err, f.Hints...)
	}
	return err
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
		return exitcode.Input(err)
	}
	if err != nil {
		return failure.Open(err)
	}
	return emit(c, res, res.Lines()...)
}
