package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/fileio"
	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/internal/serving"
	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/sign"
)

// A witness key is a writ key (PREFIX.key, PREFIX.pub, as `writ key
// generate` writes them) and its name, which the cosignature/v1 key id
// commits to: `witness key generate` writes the verifier key to
// PREFIX.vkey, and `witness serve` takes the name from there, so the
// witness's identity cannot drift between runs.

func witnessCommand() *cli.Command {
	urlFlag := &cli.StringFlag{Name: "url", Required: true, Usage: "the witness's `URL` prefix: https://, or http:// on loopback"}
	return &cli.Command{
		Name:  "witness",
		Usage: "a C2SP tlog-witness: cosign checkpoints of the logs it trusts, each consistent with the last",
		Subcommands: []*cli.Command{
			{
				Name:  "key",
				Usage: "witness keys",
				Subcommands: []*cli.Command{{
					Name:      "generate",
					Usage:     "write PREFIX.key, PREFIX.pub and PREFIX.vkey; print the cosignature/v1 verifier key",
					ArgsUsage: " ",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "name", Required: true, Usage: "the witness's key `NAME`, a schema-less URL such as witness.example/w1"},
						&cli.StringFlag{Name: "out", Required: true, Usage: "write `PREFIX`.key, PREFIX.pub and PREFIX.vkey"},
						passphraseFileFlag, workFactorFlag, recipientFlag, jsonFlag,
					},
					Action: witnessKeyGenerate,
				}},
			},
			{
				Name:  "serve",
				Usage: "serve POST /add-checkpoint and GET /<sha256 hex of origin>/checkpoint over HTTP",
				Description: "The witness cosigns, with its key's cosignature/v1, a checkpoint signed by a --log key of\n" +
					"its origin and consistent with the last it cosigned for that log; its state is one file\n" +
					"per log under --dir, durable before each answer. SIGINT or SIGTERM stops it.",
				ArgsUsage: " ",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "key", Required: true, Usage: "the witness's private key `FILE` (PREFIX.key; the name is read from PREFIX.vkey), or a PKCS#11 URI (pkcs11:token=T;object=O; the name is then --name)"},
					&cli.StringFlag{Name: "dir", Required: true, Usage: "state `DIR`ectory (created 0700; one witness at a time)"},
					&cli.StringFlag{Name: "listen", Required: true, Usage: "`ADDR`ess to listen on (host:port; port 0 picks one)"},
					&cli.StringFlag{Name: "addr-file", Usage: "also write the address it listens on to `FILE`"},
					&cli.StringSliceFlag{Name: "log", Required: true, Usage: "a log's signed-note verifier `KEY` (<origin>+<8 hex>+<base64>; repeat)"},
					&cli.StringFlag{Name: "name", Usage: "the witness's key `NAME`, for a key without PREFIX.vkey or in a token (must match PREFIX.vkey otherwise)"},
					passphraseFileFlag, identityFlag,
				}, cliflags.HTTPLimits()...),
				Action: witnessServe,
			},
			{
				Name:      "add-checkpoint",
				Usage:     "submit a signed checkpoint to a witness and print its cosignature lines",
				ArgsUsage: "CHECKPOINT",
				Flags: []cli.Flag{urlFlag,
					&cli.Int64Flag{Name: "old", Usage: "the `SIZE` the witness last cosigned (default 0, or the --proof's old_size)"},
					&cli.StringFlag{Name: "proof", Usage: "consistency proof `FILE`: the output of writ ledger consistency --json"},
					jsonFlag},
				Action: witnessAddCheckpoint,
			},
			{
				Name:   "checkpoint",
				Usage:  "print the checkpoint a witness last cosigned for a log (its monitoring URL)",
				Flags:  []cli.Flag{urlFlag, &cli.StringFlag{Name: "origin", Required: true, Usage: "the log's `ORIGIN`"}},
				Action: witnessCheckpoint,
			},
		},
	}
}

func witnessKeyGenerate(c *cli.Context) error {
	if err := wantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	name, prefix := c.String("name"), c.String("out")
	if sign.IsTokenURI(prefix) {
		return exitcode.Usagef("witness key generate writes key files; for a witness key in a PKCS#11 token, make it with writ key generate --out %s --pub FILE, and serve it with writ witness serve --key URI --name NAME (which prints its verifier key)", "'pkcs11:token=T;object=O'")
	}
	if err := witness.CheckNewKeyFiles(prefix, name); errors.Is(err, os.ErrExist) {
		return exitcode.Usagef("%s.vkey exists; writ does not overwrite files (remove it or choose another --out)", prefix)
	} else if err := witnessKeyErr(err, name); err != nil {
		return err // before asking for a passphrase
	}
	to, err := newKeyRecipients(c, prefix+".key")
	if err != nil {
		return err
	}
	kf, err := witness.GenerateKeyFiles(prefix, name, to, rand.Reader)
	if err != nil {
		return witnessKeyErr(err, name)
	}
	return emit(c, kf, kf.VKey)
}

// witnessKeyErr maps the witness key files' errors to the flags.
func witnessKeyErr(err error, name string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, witness.ErrWitnessName):
		return exitcode.Usagef("--name %q: 1 to 128 printable ASCII characters, no space or '+' (a schema-less URL such as witness.example/w1)", name)
	case errors.Is(err, witness.ErrNameMismatch):
		return exitcode.Usagef("--name %s", strings.TrimPrefix(err.Error(), witness.ErrNameMismatch.Error()+": "))
	}
	return exitcode.Input(err)
}

// errTokenWitnessName: a witness key in a token has no PREFIX.vkey to
// name it (witness.ErrTokenName).
var errTokenWitnessName = exitcode.Usagef("--name is required with a key in a token: give the name its verifier key was made with (a schema-less URL such as witness.example/w1)")

func witnessServe(c *cli.Context) error {
	if err := wantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	if err := serving.CheckWitnessLogs(c.StringSlice("log")); err != nil {
		return err
	}
	keyRef, given := c.String("key"), c.String("name")
	if sign.IsTokenURI(keyRef) && given == "" {
		return errTokenWitnessName // before the PIN is asked
	}
	keys, err := loadSigningKeys(c, []string{keyRef})
	if err != nil {
		return err
	}
	name, err := witness.ResolveName(keyRef, keys[0], given)
	if errors.Is(err, witness.ErrNoName) {
		return exitcode.Usagef("no %s.vkey beside the key: give --name, the name its verifier key was made with", strings.TrimSuffix(keyRef, ".key"))
	} else if err := witnessKeyErr(err, given); err != nil {
		return err
	}
	w, err := serving.OpenWitness(witness.Config{Name: name, Key: keys[0], Dir: c.String("dir"), Logs: c.StringSlice("log")})
	if err != nil {
		return err
	}
	defer w.Close()
	return serveHTTP(c, w.Handler(), witness.MaxRequestSize, nil, func(addr string) string {
		return fmt.Sprintf("serving witness %s at http://%s/ for %s (verifier key %s)",
			name, addr, humanize.Plural(int64(len(w.Origins())), "log", "logs"), w.VerifierKey())
	})
}

func witnessAddCheckpoint(c *cli.Context) error {
	if err := wantArgs(c, 1, "one argument: a signed checkpoint file, or - for stdin"); err != nil {
		return err
	}
	signed, err := readWhole(c, c.Args().First(), witness.MaxRequestSize)
	if err != nil {
		return err
	}
	sub, err := witness.NewSubmission(signed, c.Int64("old"))
	if err != nil {
		return exitcode.Input(fmt.Errorf("%s: %w", c.Args().First(), err))
	}
	if path := c.String("proof"); path != "" {
		data, err := readWhole(c, path, fileio.MaxInput)
		if err != nil {
			return err
		}
		var pe *witness.ProofSizeError
		switch err := sub.ReadProof(data, c.IsSet("old")); {
		case errors.As(err, &pe) && pe.From:
			return exitcode.Usagef("--old %d, but the proof in %s is from size %d", pe.Want, path, pe.Got)
		case errors.As(err, &pe):
			return exitcode.Input(fmt.Errorf("the proof in %s is to size %d, the checkpoint's size is %d", path, pe.Got, pe.Want))
		case err != nil:
			return exitcode.Input(fmt.Errorf("%s: not the output of writ ledger consistency --json: %w", path, err))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), witness.ClientTimeout)
	defer cancel()
	sigs, err := (&witness.Client{}).AddCheckpoint(ctx, c.String("url"), sub.Old, sub.Proof, sub.Signed)
	var conflict *witness.ConflictError
	switch {
	case errors.As(err, &conflict):
		return exitcode.Refused(err, fmt.Sprintf("resubmit with --old %d and a consistency proof from size %d (writ ledger consistency --old %d --json)", conflict.Size, conflict.Size, conflict.Size))
	case errors.Is(err, witness.ErrForbidden), errors.Is(err, witness.ErrUnknownLog), errors.Is(err, witness.ErrInconsistent):
		return exitcode.Refused(err)
	case err != nil:
		return exitcode.Input(err)
	}
	if wantJSON(c) {
		return emitSorted(c, witness.NewCosignatures(sub.Checkpoint, sigs))
	}
	_, err = c.App.Writer.Write(sigs)
	return err
}

func witnessCheckpoint(c *cli.Context) error {
	if err := wantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), witness.ClientTimeout)
	defer cancel()
	b, err := (&witness.Client{}).Checkpoint(ctx, c.String("url"), c.String("origin"))
	switch {
	case errors.Is(err, witness.ErrNotCosigned):
		return exitcode.Refused(err)
	case err != nil:
		return exitcode.Input(err)
	}
	if wantJSON(c) {
		return emitSorted(c, witness.ServedCheckpoint{Origin: c.String("origin"), Checkpoint: string(b)})
	}
	_, err = c.App.Writer.Write(b)
	return err
}
