package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

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

// printRepair prints what a repair did, and how to undo it.
func printRepair(c *cli.Context, dir string, res *repair.RepairResult) error {
	undo := ""
	if res.SetAside != "" {
		undo = "writ ledger repair --dir " + humanize.ShellQuote(dir) + " --undo"
	}
	var lines []string
	warning := ""
	for _, l := range res.Logs {
		verified := fmt.Sprintf("%s verified against its signed checkpoint of %s", humanize.Plural(l.Size, "entry", "entries"), humanize.Plural(l.Checkpoint, "entry", "entries"))
		switch l.Action {
		case "whole":
			lines = append(lines, fmt.Sprintf("%s log: whole, %s; nothing changed", l.Name, verified))
		case "rebuilt":
			warning = fmt.Sprintf("a rebuilt log holds what its files still held: compare its checkpoint (writ ledger checkpoint --dir %s) with one you trust (a witness's cosigned checkpoint, a replica's) before appending", humanize.ShellQuote(dir))
			lines = append(lines, fmt.Sprintf("%s log: rebuilt from the damaged store's files, %s; the damaged store is kept in %s", l.Name, verified, filepath.Join(res.SetAside, l.Name)))
		case "set-aside":
			lines = append(lines, fmt.Sprintf("%s log: not in %s; the damaged store stays set aside in %s: restore it from an export that holds it", l.Name, c.String("from"), filepath.Join(res.SetAside, l.Name)))
			continue
		default:
			warning = "a restored ledger holds what the export held: anything appended after the export was made is not in it"
			lines = append(lines, fmt.Sprintf("%s log: restored from %s, %s; the damaged store is kept in %s", l.Name, c.String("from"), verified, filepath.Join(res.SetAside, l.Name)))
		}
		if len(l.Skipped) > 0 {
			lines = append(lines, fmt.Sprintf("%s log: not used, as they do not read back (kept in %s): %s", l.Name, res.SetAside, strings.Join(l.Skipped, ", ")))
		}
	}
	if undo != "" {
		lines = append(lines, "undo: "+undo)
	}
	if warning != "" && !wantJSON(c) {
		defer fmt.Fprintf(c.App.ErrWriter, "writ: warning: %s\n", warning)
	}
	return emit(c, repairJSON{Dir: dir, SetAside: res.SetAside, Logs: res.Logs, Undo: undo}, lines...)
}

// repairJSON is `writ ledger repair --json`'s result.
type repairJSON struct {
	Dir      string               `json:"dir" doc:"the ledger directory"`
	SetAside string               `json:"set_aside" doc:"DIR/set-aside/STAMP, where the damaged stores are kept; \"\" when nothing was moved"`
	Logs     []repair.RepairedLog `json:"logs" doc:"each log's log, action (whole, rebuilt or restored), size and checkpoint (entries), skipped (files not used)"`
	Undo     string               `json:"undo" doc:"the command that undoes it"`
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
	lines := []string{fmt.Sprintf("undone: the %s store put back as it was before the repair", strings.Join(res.Restored, " and "))}
	if len(res.Kept) > 0 {
		lines = append(lines, "kept what the repair had made: "+strings.Join(res.Kept, ", "))
	}
	return emit(c, res, lines...)
}
