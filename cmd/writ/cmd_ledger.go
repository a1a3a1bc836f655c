package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"filippo.io/age"
	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/audit"
)

var dirFlag = &cli.StringFlag{Name: "dir", Required: true, Usage: "ledger `DIR`ectory"}

var decisionsVKeyFlag = &cli.StringFlag{Name: "decisions-vkey", Usage: "trust only this verifier `KEY` for the decision log's checkpoints (writ ledger vkey --log decisions)"}

var trustRootFlag = &cli.StringFlag{Name: "trust-root", Usage: "refuse a ledger whose first root record does not have this `DIGEST` (sha256:...)"}

var logFlag = &cli.StringFlag{Name: "log", Value: "authority", Usage: "which log: authority or decisions"}

// logName returns the log --log names: authority or decisions.
func logName(c *cli.Context) (string, error) {
	name := c.String("log")
	if name != ledgerdir.AuthorityLog && name != ledgerdir.DecisionsLog {
		return "", exitcode.Usagef("--log %q: authority or decisions", name)
	}
	return name, nil
}

// openLog opens the log named by --log for reading.
func openLog(c *cli.Context) (*ledger.Log, error) {
	name, err := logName(c)
	if err != nil {
		return nil, err
	}
	log, err := ledgerdir.Dir(c.String("dir")).OpenLog(name)
	if err != nil {
		return nil, failure.OpenLog(err, c.String("dir"))
	}
	return log, nil
}

var vkeyFlag = &cli.StringFlag{Name: "vkey", Usage: "trust only this checkpoint verifier `KEY` (<origin>+<hash>+<base64>) instead of the one stored in the ledger"}

func ledgerCommand() *cli.Command {
	return &cli.Command{
		Name:  "ledger",
		Usage: "create, append to, checkpoint and verify a ledger",
		Subcommands: append([]*cli.Command{
			{
				Name:  "init",
				Usage: "create a ledger whose first entry is the root record; print its checkpoint verifier key",
				Flags: []cli.Flag{dirFlag,
					&cli.StringFlag{Name: "root", Required: true, Usage: "the signed root record `FILE`"},
					&cli.StringFlag{Name: "origin", Usage: "log origin (default writ/ledger/<random>)"},
					&cli.StringFlag{Name: "checkpoint-key", Usage: "sign checkpoints with a key kept in a PKCS#11 token: its `URI` (pkcs11:token=T;object=O, made with writ key generate --out URI --pub FILE); default: a new key file DIR/checkpoint.key"},
					passphraseFileFlag, workFactorFlag, recipientFlag, jsonFlag},
				Action: ledgerInit,
			},
			{
				Name:   "vkey",
				Usage:  "print a log's checkpoint verifier key (as stored in the ledger)",
				Flags:  []cli.Flag{dirFlag, logFlag, jsonFlag},
				Action: ledgerVKey,
			},
			{
				Name:      "append",
				Usage:     "verify each record's signatures and authority, then append them all (or none)",
				ArgsUsage: "FILE...",
				Flags: []cli.Flag{&cli.StringFlag{Name: "dir", Usage: "ledger `DIR`ectory to append to (or --to)"},
					&cli.StringFlag{Name: "to", Usage: "submit to the writer service at `URL` (writ ledger serve --write) instead; needs --vkey"},
					&cli.StringFlag{Name: "vkey", Usage: "with --to: the log's checkpoint verifier `KEY` (writ ledger vkey), which the answer's checkpoint and inclusion proofs are verified under"},
					&cli.StringFlag{Name: "client-cert", Usage: "with --to: present this client certificate (`FILE`, PEM) to a service that takes only known clients (--client-ca)"},
					&cli.StringFlag{Name: "client-key", Usage: "the client certificate's key `FILE` (PEM)"},
					passphraseFileFlag, identityFlag, jsonFlag, collectPolicyFlag, witnessTimeoutFlag},
				Action: ledgerAppend,
			},
			{
				Name:  "checkpoint",
				Usage: "print the latest signed checkpoint (C2SP tlog-checkpoint)",
				Flags: []cli.Flag{dirFlag, logFlag, jsonFlag,
					&cli.BoolFlag{Name: "refresh", Usage: "first sign a new checkpoint of the authority log (same entries, current time), with its key"},
					passphraseFileFlag, identityFlag, collectPolicyFlag, witnessTimeoutFlag},
				Action: ledgerCheckpoint,
			},
			{
				Name:  "verify",
				Usage: "verify both logs end to end: every leaf, tree hash and signed checkpoint, every authority record's signatures and authority at the time the log accepted it, every decision",
				Flags: []cli.Flag{dirFlag, vkeyFlag, decisionsVKeyFlag, jsonFlag,
					&cli.BoolFlag{Name: "rebuild-state", Usage: "first write the authority log's persisted state again from a full replay (after a verify that found it diverged)"}},
				Action: ledgerVerify,
			},
			repairCommand(),
		}, append(proofCommands(), fleetCommands()...)...),
	}
}

func ledgerInit(c *cli.Context) error {
	rootBytes, err := readWhole(c, c.String("root"), schemas.MaxRecordSize)
	if err != nil {
		return err
	}
	keyFailed := false // the checkpoint key's error is the command line's own
	created, err := verify.NewLedger(ledgerdir.Dir(c.String("dir")), c.String("origin"), rootBytes, time.Now(),
		func() (ledgerdir.NewKey, error) {
			k, err := newCheckpointKey(c)
			keyFailed = err != nil
			return k, err
		})
	var fe *ledgerdir.FirstEntryError
	switch {
	case keyFailed:
		return err
	case errors.As(err, &fe):
		return failure.Record(fmt.Errorf("root record %s: %w", c.String("root"), fe.Err))
	case err != nil:
		return exitcode.Input(err)
	}
	return emitSorted(c, created, created.VKey)
}

// newCheckpointKey says which key a new ledger's checkpoints are signed
// with: a new key file, or the token key --checkpoint-key names.
func newCheckpointKey(c *cli.Context) (ledgerdir.NewKey, error) {
	ref := c.String("checkpoint-key")
	if ref == "" {
		to, err := newKeyRecipients(c, "the new checkpoint key")
		if err != nil {
			return ledgerdir.NewKey{}, err
		}
		return ledgerdir.NewKey{Recipients: to, Rand: rand.Reader}, nil
	}
	if !sign.IsTokenURI(ref) {
		return ledgerdir.NewKey{}, exitcode.Usagef("--checkpoint-key %q: a PKCS#11 URI (pkcs11:token=T;object=O); a key file is made by ledger init itself", ref)
	}
	if f := cliflags.Given(c, keyFileFlags...); f != nil {
		return ledgerdir.NewKey{}, exitcode.Usagef("--%s is for a checkpoint key file: a key in a token is kept by the token", f[0])
	}
	key, err := sign.LoadKey(ref, sign.KeyOptions{PIN: tokenPIN(c)})
	if err != nil {
		return ledgerdir.NewKey{}, failure.Key(err)
	}
	return ledgerdir.NewKey{TokenURI: ref, Token: key}, nil
}

func ledgerVKey(c *cli.Context) error {
	name, err := logName(c)
	if err != nil {
		return err
	}
	k, err := ledgerdir.Dir(c.String("dir")).LogKey(name)
	if err != nil {
		return failure.OpenLog(err, c.String("dir"))
	}
	return emitSorted(c, vkeyResult{k.String(), k.Name()}, k.String())
}

func ledgerAppend(c *cli.Context) error {
	if err := wantArgs(c, -1, "one or more record FILEs"); err != nil {
		return err
	}
	policy, err := readPolicy(c)
	if err != nil {
		return err
	}
	var entries [][]byte
	for _, p := range c.Args().Slice() {
		data, err := readWhole(c, p, schemas.MaxRecordSize)
		if err != nil {
			return err
		}
		entries = append(entries, data)
	}
	if (c.String("dir") == "") == (c.String("to") == "") {
		return exitcode.Usagef("give --dir (append to a ledger here) or --to (submit to a writer service), one of them")
	} else if c.String("to") != "" {
		return ledgerAppendTo(c, entries)
	}
	if err := writerPolicy(c, policy, nil); err != nil {
		return err
	}
	auth, applied, err := verify.AppendRecords(ledgerdir.Dir(c.String("dir")), entries, *unlockCheckpointKey(c))
	if err != nil {
		note, err := failure.Append(err, c.String("dir"), c.Args().Slice())
		if note != "" {
			diag(c, levelNote, "%s", note)
		}
		return err
	}
	log := auth.Log
	defer log.Close()
	if note := auth.ReplayNote(); note != "" {
		diag(c, levelNote, "%s", note)
	}
	for _, a := range applied {
		if err := emitSorted(c, a,
			fmt.Sprintf("%d %s %s", a.Index, a.Kind, a.Digest)); err != nil {
			return err
		}
	}
	if _, err = collectWitnessed(c, log, policy); err != nil && len(applied) > 0 {
		return failure.Appended(err, applied[0].Index, applied[len(applied)-1].Index)
	}
	return err
}

func ledgerCheckpoint(c *cli.Context) error {
	policy, err := readPolicy(c)
	if err != nil {
		return err
	}
	if policy != nil && !c.Bool("refresh") {
		return exitcode.Usagef("--policy collects cosignatures for a new checkpoint: give --refresh too")
	}
	var witnessing *formats.Witnessing
	if c.Bool("refresh") {
		if witnessing, err = refreshCheckpoint(c, policy); err != nil {
			return err
		}
	}
	log, err := openLog(c)
	if err != nil {
		return err
	}
	defer log.Close()
	// The checkpoint as published: with the witnesses' cosignatures.
	signed, err := log.CosignedCheckpoint()
	if err != nil {
		return err
	}
	if !wantJSON(c) {
		_, err = c.App.Writer.Write(signed)
		return err
	}
	// Verified under the log's key before anything of it is shown.
	cp, err := formats.OpenCheckpoint(signed, log.Key())
	if err != nil {
		return exitcode.Refused(fmt.Errorf("the %s log's stored checkpoint: %w", c.String("log"), err), "run `writ ledger verify --dir "+c.String("dir")+"` for the evidence")
	}
	return emitSorted(c, checkpointResult{audit.LogSummary{Log: c.String("log"), Origin: cp.Origin, Size: cp.Size, RootHash: hex.EncodeToString(cp.Hash[:])}, string(signed), witnessing})
}

// refreshCheckpoint signs a new checkpoint of the authority log of --dir
// (the same entries, the current time) with its key, once policy (nil:
// none) is judged for the log (writerPolicy), and collects the
// witnesses' cosignatures for it (collectWitnessed).
func refreshCheckpoint(c *cli.Context, policy *formats.Policy) (*formats.Witnessing, error) {
	if c.String("log") != "authority" {
		return nil, exitcode.Usagef("--refresh signs the authority log's checkpoint; the decision log's is signed by every admit")
	}
	l, err := openAuthorityKeyed(c)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	if err := writerPolicy(c, policy, l.Key()); err != nil {
		return nil, err
	}
	if err := l.Refresh(); err != nil {
		return nil, exitcode.Refused(fmt.Errorf("refreshing the checkpoint: %w", err))
	}
	return collectWitnessed(c, l, policy)
}

// writerPolicy refuses, before a writer signs anything, a policy (nil:
// none) for another log than the one of key k (nil: the key --dir
// stores, policyForLedger), or one no collection could meet
// (collectable).
func writerPolicy(c *cli.Context, policy *formats.Policy, k *formats.LogKey) error {
	if err := policyForLedger(c, policy, k, c.String("dir")); err != nil {
		return err
	}
	return collectable(c, policy)
}

// collectWitnessed collects the witnesses' cosignatures for the latest
// checkpoint of l (collectCosignatures) and says on stderr which quorum
// cosigned it; it returns that witnessing, nil without a policy.
func collectWitnessed(c *cli.Context, l *ledger.Log, policy *formats.Policy) (*formats.Witnessing, error) {
	res, err := collectCosignatures(c, l, policy)
	if err != nil || res == nil {
		return nil, err
	}
	diag(c, levelInfo, "checkpoint of size %d %s", res.Checkpoint.Size, humanize.Witnessed(res.Witnessing))
	return &res.Witnessing, nil
}

// ledgerVerify verifies both logs of the ledger the way an audit does
// (audit.Run): every entry, tree hash, signed checkpoint and history
// checkpoint; every authority record's signatures and authority, replayed
// at the time the log accepted it; every decision decoded strictly and
// bound to the authority log. It prints what verified, or the first
// failure with its log and index.
func ledgerVerify(c *cli.Context) error {
	dir := c.String("dir")
	vkey, err := logKeyValue(c, "vkey")
	if err != nil {
		return err
	}
	dvkey, err := logKeyValue(c, "decisions-vkey")
	if err != nil {
		return err
	}
	if c.Bool("rebuild-state") {
		err := verify.RebuildState(ledgerdir.Dir(dir), vkey)
		if oe := (*ledgerdir.OpenError)(nil); errors.As(err, &oe) {
			return failure.Open(oe.Err)
		} else if err != nil {
			return exitcode.Refused(fmt.Errorf("the state was not rebuilt: the authority log does not verify: %w", err))
		}
	}
	rep, err := audit.Run(audit.Dir(dir), audit.Options{AuthorityVKey: vkey, DecisionsVKey: dvkey})
	if err != nil {
		return failure.Open(err)
	}
	v, failed := rep.Verified()
	if failed != nil {
		if wantJSON(c) {
			emitSorted(c, failed)
		}
		if errors.Is(rep.Failure.Cause, verify.ErrStateDiverged) {
			return exitcode.Refused(fmt.Errorf("%s log: %w", rep.Failure.Log, rep.Failure.Cause), "the log verifies, but the state this directory persisted for it does not match it (edited, or a bug): keep a copy of the directory as evidence, then run `writ ledger verify --dir "+dir+" --rebuild-state` to write it again from a full replay")
		}
		return exitcode.Refused(fmt.Errorf("%s log: %w", rep.Failure.Log, rep.Failure.Cause), "the ledger is not the one its checkpoints sign, or holds an entry writ would refuse; keep it as evidence")
	}
	return emitSorted(c, v, v.Lines()...)
}

// unlockCheckpointKey says how the commands that sign (append, receipts,
// refresh) unlock the checkpoint key of --dir: a token key's PIN, or the
// key file's identities (--identity, or a passphrase asked for only then).
func unlockCheckpointKey(c *cli.Context) *ledgerdir.Unlock {
	return &ledgerdir.Unlock{
		Identities: func() ([]age.Identity, error) { return unlockIdentities(c, "the ledger's checkpoint key") },
		PIN:        tokenPIN(c),
	}
}

// openAuthorityKeyed opens the authority log of --dir with its checkpoint
// key unlocked, for commands that sign (receipts, refresh).
func openAuthorityKeyed(c *cli.Context) (*ledger.Log, error) {
	log, err := ledgerdir.Dir(c.String("dir")).OpenAuthorityKeyed(*unlockCheckpointKey(c))
	if err != nil {
		return nil, failure.OpenLog(err, c.String("dir"))
	}
	return log, nil
}
