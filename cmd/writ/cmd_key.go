package main

import (
	"crypto/rand"
	"fmt"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/sign"
)

func keyCommand() *cli.Command {
	return &cli.Command{
		Name:  "key",
		Usage: "generate keys and print key ids",
		Subcommands: []*cli.Command{
			{
				Name:      "generate",
				Usage:     "write PREFIX.key (age-encrypted, 0600) and PREFIX.pub (PEM PKIX); print the key id",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "out", Required: true, Usage: "write `PREFIX`.key and PREFIX.pub"},
					passphraseFileFlag, workFactorFlag, recipientFlag, jsonFlag,
				},
				Action: keyGenerate,
			},
			{
				Name:      "id",
				Usage:     "print the key id of a public key (lowercase hex SHA-256 of its PKIX DER)",
				ArgsUsage: "PUB",
				Flags:     []cli.Flag{jsonFlag},
				Action:    keyID,
			},
		},
	}
}

func keyGenerate(c *cli.Context) error {
	if err := wantArgs(c, 0, "no arguments"); err != nil {
		return err
	}
	prefix := c.String("out")
	to, err := newKeyRecipients(c, prefix+".key")
	if err != nil {
		return err
	}
	k, err := sign.GenerateKeyFiles(prefix, to, rand.Reader)
	if err != nil {
		return inputErr(err)
	}
	return emit(c, map[string]string{"key_id": k.Public().ID(), "private_key": prefix + ".key", "public_key": prefix + ".pub"},
		k.Public().ID())
}

func keyID(c *cli.Context) error {
	if err := wantArgs(c, 1, "one argument: a public key file (PEM PKIX), or - for stdin"); err != nil {
		return err
	}
	data, err := readWhole(c, c.Args().First(), sign.MaxPublicKeyFile)
	if err != nil {
		return err
	}
	k, err := sign.ParsePublicKeyPEM(data)
	if err != nil {
		return inputErr(fmt.Errorf("%s: %w", c.Args().First(), err))
	}
	return emit(c, map[string]string{"key_id": k.ID()}, k.ID())
}

// loadSigningKeys unlocks each private key file with one passphrase.
func loadSigningKeys(c *cli.Context, paths []string) ([]*sign.PrivateKey, error) {
	if len(paths) == 0 {
		return nil, usageErr("--key is required")
	}
	ids, err := unlockIdentities(c, "the signing key")
	if err != nil {
		return nil, err
	}
	var keys []*sign.PrivateKey
	for _, p := range paths {
		k, err := sign.LoadPrivateKey(p, ids...)
		if err != nil {
			return nil, inputErr(err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}
