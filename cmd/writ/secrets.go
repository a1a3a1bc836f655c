package main

// Secrets: the flags that say where the passphrase, age identities and
// recipients of key files come from, and thin adapters over
// internal/secrets (never a secret in a flag's value).

import (
	"filippo.io/age"
	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/secrets"
)

var passphraseFileFlag = &cli.StringFlag{Name: "passphrase-file", Usage: "read the key passphrase from `FILE`, which wins over $WRIT_PASSPHRASE (else a terminal prompt)"}

var identityFlag = &cli.StringFlag{Name: "identity", Usage: "unlock key files with the age identities in `FILE` (for keys encrypted with --recipient) instead of a passphrase"}

var recipientFlag = &cli.StringSliceFlag{Name: "recipient", Usage: "encrypt new key files to this age X25519 `RECIPIENT` (age1...; repeat) instead of a passphrase"}

// keyFileFlags are the flags that only a key file takes: a key in a
// token is kept by the token.
var keyFileFlags = []string{"passphrase-file", "work-factor", "recipient"}

var workFactorFlag = &cli.IntFlag{Name: "work-factor", Value: 18, Usage: "scrypt work factor (log2 N, 10 to 20) for new passphrase-encrypted key files: 18 (256 MiB, about 1.4 s) for real keys; below 18 only for throwaway keys"}

// secretsOf is where the command's secrets come from: its flags, stdin
// and stderr.
func secretsOf(c *cli.Context) *secrets.Source {
	return &secrets.Source{PassphraseFile: c.String("passphrase-file"), IdentityFile: c.String("identity"),
		Recipients: c.StringSlice("recipient"), WorkFactor: c.Int("work-factor"), WorkFactorSet: c.IsSet("work-factor"),
		Stdin: c.App.Reader, Prompt: c.App.ErrWriter}
}

// unlockIdentities is secrets.Source.Identities for the command.
func unlockIdentities(c *cli.Context, what string) ([]age.Identity, error) {
	return secretsOf(c).Identities(what)
}

// newKeyRecipients is secrets.Source.NewKeyRecipients for the command.
func newKeyRecipients(c *cli.Context, what string) ([]age.Recipient, error) {
	return secretsOf(c).NewKeyRecipients(what)
}

// tokenPIN is secrets.Source.TokenPIN for the command.
func tokenPIN(c *cli.Context) func(uri string) ([]byte, error) { return secretsOf(c).TokenPIN() }
