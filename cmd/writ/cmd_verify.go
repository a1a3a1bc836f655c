package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/sign"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "verify a tagged COSE_Sign1 or COSE_Sign (EdDSA), from writ or elsewhere, with one public key",
		ArgsUsage: "FILE",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "key", Required: true, Usage: "the Ed25519 public key `FILE` (PEM PKIX; one)"},
			jsonFlag,
		},
		Action: verifyEnvelope,
	}
}

// verifyEnvelope: exit 0 valid, 1 a signature that does not verify under
// the key (or is not Ed25519), 2 malformed input or an unusable key, and
// also 2 for a signature that verifies over a payload whose content type
// names a writ kind it does not decode as (a malformed record).
func verifyEnvelope(c *cli.Context) error {
	if err := wantArgs(c, 1, "one argument: the envelope FILE, or - for stdin"); err != nil {
		return err
	}
	path, err := oneKey(c, "writ verify checks an envelope against one public key at a time")
	if err != nil {
		return err
	}
	key, err := sign.LoadPublicKey(path)
	if err != nil {
		return exitcode.Input(err)
	}
	data, err := readWhole(c, c.Args().First(), sign.MaxForeignEnvelope)
	if err != nil {
		return err
	}
	info, err := sign.VerifyForeign(data, key)
	switch {
	case errors.Is(err, sign.ErrBadSignature), errors.Is(err, sign.ErrAlgorithm):
		if wantJSON(c) {
			emitSorted(c, sign.ForeignFailure{Valid: false, Error: err.Error()})
		}
		return exitcode.Refused(err)
	case err != nil:
		return exitcode.Input(err)
	}
	if info.RecordErr != nil {
		// The signature verifies, but the payload is not the record its
		// content type names: never report it as a writ record.
		if wantJSON(c) {
			emitSorted(c, info.RecordResult())
		}
		return exitcode.Input(fmt.Errorf("the %s signature by key %s verifies, but its payload is not a valid writ %s record (content type %s): %w",
			info.Form, info.KeyID, info.DeclaredKind, info.ContentType, info.RecordErr))
	}
	line := fmt.Sprintf("valid: %s signed by key %s (alg %d), payload %d bytes", info.Form, info.KeyID, info.Alg, len(info.Payload))
	if info.Kind != "" {
		line += ", writ " + string(info.Kind) + " record"
	}
	return emitSorted(c, info.Result(), line)
}
