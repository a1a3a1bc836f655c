package main

// Secrets: the passphrase, age identities and recipients of key files,
// and a PKCS#11 token's PIN, read from a file, the environment or the
// terminal (never from a flag's value).

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"filippo.io/age"
	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/term"
)

var passphraseFileFlag = &cli.StringFlag{Name: "passphrase-file", Usage: "read the key passphrase from `FILE`, which wins over $WRIT_PASSPHRASE (else a terminal prompt)"}

var identityFlag = &cli.StringFlag{Name: "identity", Usage: "unlock key files with the age identities in `FILE` (for keys encrypted with --recipient) instead of a passphrase"}

var recipientFlag = &cli.StringSliceFlag{Name: "recipient", Usage: "encrypt new key files to this age X25519 `RECIPIENT` (age1...; repeat) instead of a passphrase"}

// unlockIdentities returns the age identities that unlock existing key
// files: those in --identity FILE, else the passphrase's.
func unlockIdentities(c *cli.Context, what string) ([]age.Identity, error) {
	if path := c.String("identity"); path != "" {
		if c.IsSet("passphrase-file") {
			return nil, usageErr("--identity and --passphrase-file: key files are unlocked with age identities or with a passphrase, not both; give one")
		}
		ids, err := sign.LoadIdentities(path)
		if err != nil {
			return nil, inputErr(err)
		}
		return ids, nil
	}
	pass, err := passphrase(c, what, false)
	if err != nil {
		return nil, err
	}
	id, err := sign.ScryptIdentity(pass)
	if err != nil {
		return nil, inputErr(err)
	}
	return []age.Identity{id}, nil
}

// newKeyRecipients returns the age recipients a new key file is encrypted
// to: the --recipient values, else the passphrase (asked twice on a
// terminal) with --work-factor.
func newKeyRecipients(c *cli.Context, what string) ([]age.Recipient, error) {
	if rs := c.StringSlice("recipient"); len(rs) > 0 {
		for _, f := range []string{"passphrase-file", "work-factor"} {
			if c.IsSet(f) {
				return nil, usageErr("--%s and --recipient: a key file is encrypted to age recipients or to a passphrase, not both; give one", f)
			}
		}
		out, err := sign.ParseRecipients(rs)
		if err != nil {
			return nil, inputErr(err)
		}
		return out, nil
	}
	pass, err := passphrase(c, what, true)
	if err != nil {
		return nil, err
	}
	r, err := sign.ScryptRecipient(pass, c.Int("work-factor"))
	if err != nil {
		return nil, inputErr(err)
	}
	return []age.Recipient{r}, nil
}

var workFactorFlag = &cli.IntFlag{Name: "work-factor", Value: 18, Usage: "scrypt work factor (log2 N, 10 to 20) for new passphrase-encrypted key files: 18 (256 MiB, about 1.4 s) for real keys; below 18 only for throwaway keys"}

// passphrase returns the key passphrase: --passphrase-file when given
// (what a command line says beats what its environment says), else
// $WRIT_PASSPHRASE, else a terminal prompt (twice when confirm).
func passphrase(c *cli.Context, what string, confirm bool) ([]byte, error) {
	if path := c.String("passphrase-file"); path != "" {
		data, err := readWhole(c, path, 4096)
		if err != nil {
			return nil, err
		}
		line, _, _ := strings.Cut(string(data), "\n")
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			return nil, inputErr(fmt.Errorf("%s: the passphrase file's first line is empty", path))
		}
		return []byte(line), nil
	}
	if v := os.Getenv("WRIT_PASSPHRASE"); v != "" {
		return []byte(v), nil
	}
	in, ok := c.App.Reader.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return nil, usageErr("no passphrase for %s: set WRIT_PASSPHRASE, pass --passphrase-file FILE, or run on a terminal", what)
	}
	ask := func(prompt string) ([]byte, error) {
		fmt.Fprintf(c.App.ErrWriter, "%s: ", prompt)
		p, err := term.ReadPassword(int(in.Fd()))
		fmt.Fprintln(c.App.ErrWriter)
		return p, err
	}
	p, err := ask("passphrase for " + what)
	if err != nil {
		return nil, inputErr(err)
	}
	if len(p) == 0 {
		return nil, usageErr("empty passphrase")
	}
	if confirm {
		again, err := ask("again")
		if err != nil {
			return nil, inputErr(err)
		}
		if !bytes.Equal(p, again) {
			return nil, usageErr("the passphrases do not match")
		}
	}
	return p, nil
}

// tokenPIN returns the sign.KeyOptions.PIN callback: the user PIN of the
// PKCS#11 token uri (printed without PIN) names, asked on the terminal
// without echo. With no terminal it is an error saying to give
// pin-source; a PIN is never read from a flag or the environment.
func tokenPIN(c *cli.Context) func(uri string) ([]byte, error) {
	return func(uri string) ([]byte, error) {
		in, ok := c.App.Reader.(*os.File)
		if !ok || !term.IsTerminal(int(in.Fd())) {
			return nil, errors.New("no terminal to ask for the PIN on: add pin-source=/path/to/file to the URI's query (a file readable only by you holding the PIN), e.g. 'pkcs11:token=T;object=O?pin-source=/etc/writ/pin'")
		}
		fmt.Fprintf(c.App.ErrWriter, "PIN for %s: ", uri)
		p, err := term.ReadPassword(int(in.Fd()))
		fmt.Fprintln(c.App.ErrWriter)
		if err != nil {
			return nil, err
		}
		if len(p) == 0 {
			return nil, errors.New("empty PIN")
		}
		return p, nil
	}
}
