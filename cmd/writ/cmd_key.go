package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/cliflags"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/failure"
	"github.com/writ-ledger/writ/internal/fileio"
	"github.com/writ-ledger/writ/internal/secrets"
	"github.com/writ-ledger/writ/sign"
)

func keyCommand() *cli.Command {
	return &cli.Command{
		Name:  "key",
		Usage: "generate keys and print key ids",
		Subcommands: []*cli.Command{
			{
				Name:      "generate",
				Usage:     "write PREFIX.key (age-encrypted, 0600) and PREFIX.pub (PEM PKIX), or make the key inside a PKCS#11 token; print the key id",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "out", Required: true, Usage: "write `PREFIX`.key and PREFIX.pub; or a PKCS#11 URI (pkcs11:token=T;object=O) to make the key inside that token, with --pub"},
					&cli.StringFlag{Name: "pub", Usage: "with a PKCS#11 URI as --out: write the new key's public key (PEM PKIX) to `FILE`"},
					passphraseFileFlag, workFactorFlag, recipientFlag, jsonFlag,
				},
				Action: keyGenerate,
			},
			{
				Name:      "id",
				Usage:     "print the key id of a public key (lowercase hex SHA-256 of its PKIX DER), or of a key in a PKCS#11 token",
				ArgsUsage: "PUB|URI",
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
	if sign.IsTokenURI(prefix) {
		return keyGenerateToken(c, prefix)
	}
	if c.IsSet("pub") {
		return exitcode.Usagef("--pub is for a key made in a PKCS#11 token (--out pkcs11:...); a key file's public key is written to PREFIX.pub")
	}
	to, err := newKeyRecipients(c, prefix+".key")
	if err != nil {
		return err
	}
	k, err := sign.GenerateKeyFiles(prefix, to, rand.Reader)
	if err != nil {
		return exitcode.Input(err)
	}
	return emitSorted(c, keyResult{keyIDResult{k.Public().ID()}, prefix + ".key", prefix + ".pub"},
		k.Public().ID())
}

// keyGenerateToken makes a key inside the token uri names and writes its
// public key to --pub, which must not exist yet.
func keyGenerateToken(c *cli.Context, uri string) error {
	pub := c.String("pub")
	if pub == "" {
		return exitcode.Usagef("--pub FILE is required with a PKCS#11 URI as --out: the private key never leaves the token, its public key is written to FILE")
	}
	if f := cliflags.Given(c, keyFileFlags...); f != nil {
		return exitcode.Usagef("--%s is for key files: a key in a token is kept by the token, not encrypted by writ", f[0])
	}
	if _, err := os.Lstat(pub); err == nil {
		return exitcode.Usagef("%s exists; writ does not overwrite files (remove it or choose another --pub)", pub)
	}
	k, err := sign.GenerateTokenKey(uri, sign.KeyOptions{PIN: tokenPIN(c)})
	if err != nil {
		return failure.Key(err)
	}
	u, _ := sign.ParseTokenURI(uri) // GenerateTokenKey parsed it
	if err := fileio.WriteNew(pub, k.Public().PEM()); err != nil {
		return exitcode.Input(fmt.Errorf("the key %s was made in the token as %s, but its public key was not written: %w", k.Public().ID(), u, err),
			"`writ key id "+u.String()+"` prints its key id; remove the objects with the token's tool to start again")
	}
	return emitSorted(c, keyResult{keyIDResult{k.Public().ID()}, u.String(), pub}, k.Public().ID())
}

func keyID(c *cli.Context) error {
	if err := wantArgs(c, 1, "one argument: a public key file (PEM PKIX), - for stdin, or a PKCS#11 URI (pkcs11:token=T;object=O)"); err != nil {
		return err
	}
	if ref := c.Args().First(); sign.IsTokenURI(ref) {
		k, err := sign.LoadKey(ref, sign.KeyOptions{PIN: tokenPIN(c)})
		if err != nil {
			return failure.Key(err)
		}
		return emitSorted(c, keyIDResult{k.Public().ID()}, k.Public().ID())
	}
	data, err := readWhole(c, c.Args().First(), sign.MaxPublicKeyFile)
	if err != nil {
		return err
	}
	k, err := sign.ParsePublicKeyPEM(data)
	if err != nil {
		return exitcode.Input(fmt.Errorf("%s: %w", c.Args().First(), err))
	}
	return emitSorted(c, keyIDResult{k.ID()}, k.ID())
}

// loadSigningKeys is secrets.Source.SigningKeys for the command: a key
// that did not load is failure.Key's bad input, with its token hint.
func loadSigningKeys(c *cli.Context, refs []string) ([]*sign.PrivateKey, error) {
	keys, err := secretsOf(c).SigningKeys(refs)
	if ke := (*secrets.KeyError)(nil); errors.As(err, &ke) {
		return nil, failure.Key(ke.Err)
	}
	return keys, err
}
