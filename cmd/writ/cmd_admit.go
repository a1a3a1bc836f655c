package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/admission"
	"github.com/writ-ledger/writ/internal/admitview"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/internal/runnerkey"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

func admitCommand() *cli.Command {
	return &cli.Command{
		Name:      "admit",
		Usage:     "admit or refuse a dispatch on this runner, and record the decision",
		ArgsUsage: "DISPATCH",
		Flags: append(append(runnerFlags(), dispatchFlags()...),
			&cli.BoolFlag{Name: "rules", Usage: "list every rule id and exit"},
			jsonFlag,
		),
		Action: admit,
	}
}

func printRules(c *cli.Context) error {
	if wantJSON(c) {
		for _, r := range verify.Rules {
			if err := emitSorted(c, r.Listing()); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(c.App.Writer, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tCLASS\tREFUSES\tCHECKS THAT")
	for _, r := range verify.Rules {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Class, r.Refuses(), r.Summary)
	}
	return tw.Flush()
}

// dispatchFlags say where the runner keeps what a dispatch would run,
// shared by admit and admission request.
func dispatchFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "agent-binary", Usage: "`PATH` of the agent binary this dispatch would run"},
		&cli.StringFlag{Name: "engine-binary", Usage: "`PATH` of the engine binary, when the instruction names one"},
		&cli.StringFlag{Name: "provision-dir", Usage: "`DIR` holding the provisioned files (.provision/NAME is DIR/NAME)"},
		&cli.StringFlag{Name: "receipt", Usage: "RFC 9942 receipt `FILE` for the dispatch in the authority log (always checked when given; required with --require-receipt)"},
	}
}

// runnerFlags are the flags that configure a runner, shared by admit and
// admission serve.
func runnerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ledger", Usage: "this runner's ledger `DIR`"},
		&cli.StringFlag{Name: "machine", Usage: "this runner's machine `NAME`"},
		&cli.StringFlag{Name: "mode", Value: "off", Usage: "`MODE` for authenticity, authority, freshness and provenance rules: off (admit and record), warn (admit, record what enforce would refuse), enforce (refuse); integrity rules refuse in every mode"},
		&cli.DurationFlag{Name: "max-ledger-age", Usage: "refuse (stale-ledger) when the ledger's newest checkpoint was signed longer ago than `DURATION` (0: no limit); under --policy, when its witness quorum cosigned it longer ago"},
		&cli.StringSliceFlag{Name: "refuse", Usage: "refuse on `RULE` in every mode, whatever --mode says (repeat, or comma-separated; tightens only; `writ admit --rules` lists them)"},
		&cli.BoolFlag{Name: "require-receipt", Usage: "admit only a dispatch whose receipt proves it is in the authority log this runner verified"},
		&cli.StringFlag{Name: "control-workspace", Usage: "the control plane's workspace root, an absolute `PATH` on the sending host: a remote brief naming a path beneath it is refused (rule R30)"},
		&cli.BoolFlag{Name: "rename-machine", Usage: "decide for --machine although this runner's decisions are for another machine name (without it, a name that differs from the latest decision's is refused, exit 2, nothing recorded)"},
		&cli.StringFlag{Name: "policy-cel", Usage: "this runner's admission policy `FILE` (JSON rules of CEL, package policy): run after every built-in check, it can only refuse (policy-refused, in every mode)"},
		vkeyFlag, trustRootFlag, policyFlag, runnerkey.ProtectionFlag, runnerkey.TokenKeyFlag, passphraseFileFlag, identityFlag, workFactorFlag, recipientFlag,
	}
}

// runnerSetup is a runner's configuration read from its flags.
type runnerSetup struct {
	dir   string
	trust verify.Trust
	kp    ledgerdir.KeyParams
	cfg   verify.Config
}

// readRunnerFlags validates the runner flags and says how to load (or, on
// first use, create) the runner key that signs the decision log
// (runnerKeyParams).
func readRunnerFlags(c *cli.Context) (*runnerSetup, error) {
	dir, machine := c.String("ledger"), c.String("machine")
	for _, f := range []string{"ledger", "machine"} {
		if c.String(f) == "" {
			return nil, exitcode.Usagef("--%s is required (see writ %s --help)", f, c.Command.FullName())
		}
	}
	cfg, err := verify.Settings{Machine: machine, Mode: c.String("mode"), MaxLedgerAge: c.Duration("max-ledger-age"),
		Refuse: cliflags.CommaList(c.StringSlice("refuse")), RequireReceipt: c.Bool("require-receipt"),
		ControlWorkspace: c.String("control-workspace"), PolicyFile: c.String("policy-cel")}.Config()
	if err != nil {
		return nil, exitcode.Usagef("--%v", err)
	}
	cfg.Note, cfg.RenameMachine = func(msg string) { diag(c, levelNote, "%s", msg) }, c.Bool("rename-machine")
	trust := verify.Trust{TrustRoot: c.String("trust-root")}
	if trust.VKey, err = logKeyValue(c, "vkey"); err != nil {
		return nil, err
	}
	if err := trust.Check(); err != nil {
		return nil, exitcode.Usagef("--%v", err)
	}
	if trust.Policy, err = readPolicy(c); err != nil {
		return nil, err
	}
	if err := policyForLedger(c, trust.Policy, trust.VKey, dir); err != nil {
		return nil, err
	}
	kp, err := runnerKeyParams(c, dir)
	if err != nil {
		return nil, err
	}
	return &runnerSetup{dir: dir, trust: trust, kp: kp, cfg: cfg}, nil
}

func admit(c *cli.Context) error {
	if c.Bool("rules") {
		return printRules(c)
	}
	if err := wantArgs(c, 1, "one argument: the DISPATCH file, or - for stdin"); err != nil {
		return err
	}
	if c.String("agent-binary") == "" {
		return exitcode.Usagef("--agent-binary is required (see writ admit --help)")
	}
	if err := cliflags.RunnerBinaries(c); err != nil {
		return err
	}
	setup, err := readRunnerFlags(c)
	if err != nil {
		return err
	}
	raw, over, err := readInput(c, c.Args().First(), schemas.MaxRecordSize)
	if err != nil {
		return err
	} else if err := cliflags.Dispatch(c.Args().First(), raw); err != nil {
		return err
	}
	d := verify.Dispatch{Raw: raw, AgentBinary: c.String("agent-binary"), EngineBinary: c.String("engine-binary"), ProvisionDir: c.String("provision-dir")}
	if c.IsSet("receipt") {
		d.ReceiptGiven = true
		if d.Receipt, err = readWhole(c, c.String("receipt"), schemas.MaxRecordSize); err != nil {
			return err
		}
	}
	if over && c.Args().First() != "-" {
		// Record the digest of the whole oversized file, not of its prefix.
		if full, _, err := transfer.DigestFile(c.Args().First()); err == nil {
			d.Digest = full
		}
	}
	v, index, err := runner.AdmitAtLedger(setup.dir, setup.trust, setup.kp, setup.cfg, d)
	switch {
	case errors.Is(err, runner.ErrNotRecorded) && v != nil:
		return exitcode.Refused(fmt.Errorf("%w (the verdict was %s, rule %s)", err, v.Verdict, v.Rule))
	case errors.Is(err, runner.ErrNotRecorded):
		return exitcode.Refused(err)
	case err != nil:
		return failure.Open(err)
	}
	if err := printVerdict(c, admission.NewResponse(v, index), false); err != nil {
		return err
	}
	return verdictExit(c, v, v.Admitted())
}

// verdictExit is the exit of admit and admission request after the
// verdict v is printed: a warning when it admitted although a rule
// failed (run: the dispatch may run), exit 3 for an internal error, 1
// when the dispatch may not run.
func verdictExit(c *cli.Context, v *verify.Verdict, run bool) error {
	if run && v.Rule != rules.OK {
		diag(c, levelWarning, "admitted under --mode %s although rule %s failed; --mode enforce would refuse it", v.Mode, v.Rule)
	}
	switch {
	case v.Rule == rules.Internal:
		return &exitcode.Error{Code: exitcode.Internal, Err: fmt.Errorf("internal error during admission"), Silent: true}
	case !run:
		return &exitcode.Error{Code: exitcode.No, Err: fmt.Errorf("refused"), Silent: true}
	}
	return nil
}

// printVerdict prints the verdict of admit and admission request
// (admitview): under --json one object, the decision (served false:
// admit's) or the server's whole answer (served true: admission
// request's); else the lines people read.
func printVerdict(c *cli.Context, res *admission.Response, served bool) error {
	obj, err := admitview.JSON(res, served)
	if err != nil {
		return err
	}
	return emit(c, json.RawMessage(obj), admitview.Lines(res)...)
}
