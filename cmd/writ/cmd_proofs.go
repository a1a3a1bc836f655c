package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/clicmd"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/internal/fileio"
	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/runner"
)

func proofCommands() []*cli.Command {
	index := &cli.Int64Flag{Name: "index", Required: true, Usage: "entry `N` (0-based)"}
	return []*cli.Command{
		{
			Name:  "export",
			Usage: "write both logs (entries and signed checkpoints) to one portable file an auditor can verify offline",
			Flags: []cli.Flag{dirFlag, &cli.StringFlag{Name: "out", Required: true, Usage: "`FILE` (- for stdout)"},
				&cli.BoolFlag{Name: "authority-only", Usage: "export the authority log only: what runners import to sync (a runner keeps its own decision log)"}, jsonFlag},
			Action: ledgerExport,
		},
		{
			Name:      "import",
			Usage:     "copy an export's logs into a ledger directory, refusing anything that does not verify (every authority record's signatures and authority, replayed at the time the log accepted it) or is not consistent with what it holds",
			ArgsUsage: "FILE",
			Flags:     []cli.Flag{dirFlag, vkeyFlag, decisionsVKeyFlag, trustRootFlag, policyFlag, jsonFlag},
			Action:    ledgerImport,
		},
		{
			Name:   "prove",
			Usage:  "print the inclusion proof (RFC 9162 audit path) of entry --index in the tree of --size entries",
			Flags:  []cli.Flag{dirFlag, logFlag, index, &cli.Int64Flag{Name: "size", Usage: "tree `SIZE` (default: the current size)"}, jsonFlag},
			Action: ledgerProve,
		},
		{
			Name:  "consistency",
			Usage: "print the consistency proof from the tree of --old entries to the tree of --new entries",
			Flags: []cli.Flag{dirFlag, logFlag,
				&cli.Int64Flag{Name: "old", Required: true, Usage: "old tree `SIZE`"},
				&cli.Int64Flag{Name: "new", Usage: "new tree `SIZE` (default: the current size)"}, jsonFlag},
			Action: ledgerConsistency,
		},
		{
			Name:  "entry",
			Usage: "write entry --index's exact bytes (the Merkle leaf) to --out, or say what it is (--inspect; the default on a terminal)",
			Flags: []cli.Flag{dirFlag, logFlag, index, &cli.StringFlag{Name: "out", Value: "-", Usage: "`FILE` (- for stdout)"},
				&cli.BoolFlag{Name: "inspect", Usage: "print what the entry is and states, as writ inspect does, with its signers' authority in this ledger"}},
			Action: ledgerEntry,
		},
		{
			Name:  "receipt",
			Usage: "write an RFC 9942 COSE receipt (inclusion proof signed by the log key) for entry --index",
			Flags: []cli.Flag{dirFlag, index, &cli.StringFlag{Name: "out", Value: "-", Usage: "`FILE` (- for stdout)"},
				&cli.StringFlag{Name: "policy", Usage: "witness policy `FILE`: write the receipt only if the checkpoint it carries meets the quorum (exit 1 otherwise)"},
				passphraseFileFlag, identityFlag, jsonFlag},
			Action: ledgerReceipt,
		},
		{
			Name:      "verify-receipt",
			Usage:     "check an RFC 9942 receipt for an entry against a log's verifier key",
			ArgsUsage: "RECEIPT",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "vkey", Usage: "the log's checkpoint verifier `KEY` (writ ledger vkey)"},
				&cli.StringFlag{Name: "dir", Usage: "or: take the verifier key stored in the ledger at `DIR`"},
				&cli.StringFlag{Name: "entry", Required: true, Usage: "`FILE` with the entry's exact bytes"},
				&cli.StringFlag{Name: "policy", Usage: "witness policy `FILE` (C2SP tlog-policy): the receipt must carry its tree's checkpoint, cosigned by the quorum"}, jsonFlag},
			Action: ledgerVerifyReceipt,
		},
	}
}

// receiptErr explains a receipt that does not verify for the entry given
// (a *verify.ReceiptProofError's Err): without --dir, with the entry and
// tree size the receipt states; with --dir, when the log shows the entry
// file is not the entry at that index (a *verify.ReceiptEntryError), it
// says so, rather than leave it to read as a forged signature.
func receiptErr(c *cli.Context, err error, receipt []byte) error {
	dir := c.String("dir")
	if index, size, perr := formats.ReceiptPosition(receipt); dir == "" && perr == nil {
		return exitcode.Refused(err, fmt.Sprintf("the receipt says it is for entry %d of a tree of %d entries; give --dir LEDGER to compare --entry with the log's entry %d", index, size, index))
	}
	if re := (*verify.ReceiptEntryError)(nil); errors.As(err, &re) && re.Stored != "" {
		return exitcode.Refused(fmt.Errorf("%s is not the entry the receipt is for: the receipt says entry %d, which is %s in this log, and %s is %s", c.String("entry"), re.Index, re.Stored, c.String("entry"), re.Given),
			fmt.Sprintf("write the entry's exact bytes with `writ ledger entry --dir %s --index %d --out FILE` and verify against that", dir, re.Index))
	}
	return exitcode.Refused(err)
}

// proofErr is bad usage for an out-of-range request (a proof, or an
// entry the log does not hold), else err as it is.
func proofErr(err error) error {
	if errors.Is(err, formats.ErrProof) || errors.Is(err, ledger.ErrNotFound) {
		return exitcode.Input(err)
	}
	return err
}

func ledgerProve(c *cli.Context) error {
	log, err := openLog(c)
	if err != nil {
		return err
	}
	defer log.Close()
	p, err := log.ProveInclusion(c.Int64("index"), c.Int64("size"))
	if err != nil {
		return proofErr(err)
	}
	return emitSorted(c, p, p.Lines()...)
}

func ledgerConsistency(c *cli.Context) error {
	log, err := openLog(c)
	if err != nil {
		return err
	}
	defer log.Close()
	p, err := log.ProveConsistency(c.Int64("old"), c.Int64("new"))
	if err != nil {
		return proofErr(err)
	}
	// Its JSON is the proof file witness add-checkpoint --proof reads.
	return emit(c, p, p.Lines()...)
}

func ledgerEntry(c *cli.Context) error {
	log, err := openLog(c)
	if err != nil {
		return err
	}
	defer log.Close()
	e, err := log.Entry(c.Int64("index"))
	if err != nil {
		return proofErr(err)
	}
	out := c.String("out")
	if c.Bool("inspect") || (!c.IsSet("out") && fileio.IsTerminal(c.App.Writer)) {
		if e, err = log.VerifiedEntry(c.Int64("index")); err != nil {
			return proofErr(err)
		} else if c.String("log") == "decisions" {
			return clicmd.InspectBytes(c, e, -1, "", nil)
		}
		return clicmd.InspectBytes(c, e, c.Int64("index"), c.String("dir"), nil)
	}
	if err := writeOutput(c, out, e); err != nil || out == "-" {
		return err // stdout carries the entry itself
	}
	digest := schemas.SHA256Digest(e)
	return emitSorted(c, entryResult{c.Int64("index"), out, len(e), digest},
		fmt.Sprintf("wrote entry %d (%d bytes, %s) to %s", c.Int64("index"), len(e), digest, out))
}

func ledgerReceipt(c *cli.Context) error {
	policy, err := readPolicy(c)
	if err != nil {
		return err
	}
	log, err := openAuthorityKeyed(c)
	if err != nil {
		return err
	}
	defer log.Close()
	if err := policyForLedger(c, policy, log.Key(), ""); err != nil {
		return err
	}
	r, err := verify.Receipt(log, c.Int64("index"), policy, time.Now())
	if ue := (*verify.UnwitnessedError)(nil); errors.As(err, &ue) {
		return exitcode.Refused(fmt.Errorf("no receipt written: %w", ue.Err),
			"collect the cosignatures first: `writ ledger checkpoint --refresh --policy "+c.String("policy")+" --dir "+c.String("dir")+"`, then ask again")
	} else if err != nil {
		return proofErr(err)
	}
	out := c.String("out")
	if err := writeOutput(c, out, r); err != nil || out == "-" {
		return err // stdout carries the receipt itself
	}
	index, size := c.Int64("index"), log.Size()
	return emitSorted(c, receiptResult{index, size, out, schemas.SHA256Digest(r), policy != nil},
		fmt.Sprintf("receipt for entry %d in the tree of %d entries: %s (%s)", index, size, out, schemas.SHA256Digest(r)))
}

func ledgerVerifyReceipt(c *cli.Context) error {
	if err := wantArgs(c, 1, "one argument: the RECEIPT file"); err != nil {
		return err
	}
	vkey, err := logKeyValue(c, "vkey")
	if err != nil {
		return err
	}
	if (vkey == nil) == (c.String("dir") == "") {
		return exitcode.Usagef("give exactly one of --vkey KEY and --dir DIR")
	}
	receipt, err := readWhole(c, c.Args().First(), schemas.MaxRecordSize)
	if err != nil {
		return err
	}
	entry, err := readWhole(c, c.String("entry"), ledger.MaxEntrySize)
	if err != nil {
		return err
	}
	policy, err := readPolicy(c)
	if err != nil {
		return err
	}
	if err := policyForLedger(c, policy, vkey, c.String("dir")); err != nil {
		return err
	}
	out, err := verify.CheckReceipt(receipt, entry, vkey, ledgerdir.Dir(c.String("dir")), policy, time.Now())
	var oe *ledgerdir.OpenError
	var pe *verify.ReceiptProofError
	var ue *formats.UnwitnessedReceiptError
	switch {
	case errors.As(err, &oe):
		return failure.Open(oe.Err)
	case errors.As(err, &pe):
		return receiptErr(c, pe.Err, receipt)
	case errors.As(err, &ue) && !ue.Carried:
		return exitcode.Refused(err, "ask the writer for a receipt after it collected its witnesses' cosignatures (`writ ledger append --policy`)")
	case err != nil:
		return exitcode.Refused(err)
	}
	// RFC 9942 signs the root only: the index and tree size travel
	// unprotected, and several (index, size) pairs share one audit path.
	text := fmt.Sprintf("valid: the entry is in the tree with root %s, signed by the log key; the receipt places it at index %d of %d entries, which the signature does not cover (compare the root with a checkpoint of that size)", out.RootHash, out.Index, out.TreeSize)
	if out.Witnessing != nil {
		text += "; its tree's checkpoint is " + humanize.Witnessed(*out.Witnessing)
	}
	return emitSorted(c, out, text)
}

func ledgerExport(c *cli.Context) error {
	if err := checkOutput(c, "out", c.String("out")); err != nil {
		return err
	}
	var x *replica.ExportedDir
	err := streamOutput(c, c.String("out"), func(w io.Writer) (err error) {
		x, err = replica.ExportDir(w, ledgerdir.Dir(c.String("dir")), c.Bool("authority-only"), progressFor(c, "exporting", "entries"))
		return err
	})
	if oe := (*ledgerdir.OpenError)(nil); errors.As(err, &oe) {
		return failure.Open(oe.Err)
	} else if err != nil || c.String("out") == "-" {
		return err
	}
	return emitSorted(c, exportResult{c.String("out"), x.Bytes, x.Logs}, x.Text(c.String("out")))
}

func ledgerImport(c *cli.Context) error {
	if err := wantArgs(c, 1, "one argument: the export FILE"); err != nil {
		return err
	}
	trusted := map[string]*formats.LogKey{}
	for flag, name := range map[string]string{"vkey": "authority", "decisions-vkey": "decisions"} {
		k, err := logKeyValue(c, flag)
		if err != nil {
			return err
		}
		trusted[name] = k
	}
	policy, err := readPolicy(c)
	if err != nil {
		return err
	}
	logs, err := runner.ImportLedgerWith(c.String("dir"), c.Args().First(), runner.ImportOptions{Trusted: trusted,
		Trust: verify.Trust{TrustRoot: c.String("trust-root"), Policy: policy}, Progress: progressFor(c, "importing", "bytes")})
	for _, l := range logs {
		if err := emitSorted(c, l, l.Text()); err != nil {
			return err
		}
	}
	if err != nil {
		what := "nothing imported"
		if len(logs) > 0 {
			what = "the logs above were imported, the rest not"
		}
		switch {
		case errors.Is(err, replica.ErrExport) && !errors.Is(err, ledger.ErrTampered):
			return exitcode.Input(fmt.Errorf("%s: %w", what, err))
		case errors.Is(err, ledger.ErrLocked), errors.Is(err, ledger.ErrNotALog):
			return failure.Open(err)
		}
		return exitcode.Refused(fmt.Errorf("%s: %w", what, err))
	}
	return nil
}
