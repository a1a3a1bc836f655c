// Package secrets reads the secrets of writ's key files: the passphrase,
// the age identities that unlock a key file and the age recipients a new
// one is encrypted to, and a PKCS#11 token's PIN. A secret is read from
// a file, the environment ($WRIT_PASSPHRASE) or the terminal, without
// echo; never from a flag's value, which other users can read in the
// process list.
//
// Errors are *exitcode.Error, bad usage or bad input (exit 2), whose
// messages name the command line's flags (--passphrase-file, --identity,
// --recipient, --work-factor).
package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"filippo.io/age"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/fileio"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/term"
)

// MaxPassphraseFile bounds a passphrase file, in bytes.
const MaxPassphraseFile = 4096

// Source is where a command's secrets come from: the values of its
// flags, and its standard input and error (the terminal asked on).
type Source struct {
	PassphraseFile string   // --passphrase-file: its first line is the passphrase; "" for none
	IdentityFile   string   // --identity: age identities that unlock key files; "" for none
	Recipients     []string // --recipient: age recipients new key files are encrypted to
	WorkFactor     int      // --work-factor: scrypt's log2 N for a new passphrase-encrypted key file
	WorkFactorSet  bool     // whether --work-factor was given
	Stdin          io.Reader
	Prompt         io.Writer // where a terminal prompt is written (stderr)
}

// Identities returns the age identities that unlock existing key files:
// those in IdentityFile, else the passphrase's (Passphrase, what naming
// the key asked for).
func (s *Source) Identities(what string) ([]age.Identity, error) {
	if path := s.IdentityFile; path != "" {
		if s.PassphraseFile != "" {
			return nil, exitcode.Usagef("--identity and --passphrase-file: key files are unlocked with age identities or with a passphrase, not both; give one")
		}
		ids, err := sign.LoadIdentities(path)
		if err != nil {
			return nil, exitcode.Input(err)
		}
		return ids, nil
	}
	pass, err := s.Passphrase(what, false)
	if err != nil {
		return nil, err
	}
	id, err := sign.ScryptIdentity(pass)
	if err != nil {
		return nil, exitcode.Input(err)
	}
	return []age.Identity{id}, nil
}

// NewKeyRecipients returns the age recipients a new key file (what) is
// encrypted to: Recipients, else the passphrase (asked twice on a
// terminal) with WorkFactor.
func (s *Source) NewKeyRecipients(what string) ([]age.Recipient, error) {
	if len(s.Recipients) > 0 {
		for _, f := range []struct {
			name string
			set  bool
		}{{"passphrase-file", s.PassphraseFile != ""}, {"work-factor", s.WorkFactorSet}} {
			if f.set {
				return nil, exitcode.Usagef("--%s and --recipient: a key file is encrypted to age recipients or to a passphrase, not both; give one", f.name)
			}
		}
		out, err := sign.ParseRecipients(s.Recipients)
		if err != nil {
			return nil, exitcode.Input(err)
		}
		return out, nil
	}
	pass, err := s.Passphrase(what, true)
	if err != nil {
		return nil, err
	}
	r, err := sign.ScryptRecipient(pass, s.WorkFactor)
	if err != nil {
		return nil, exitcode.Input(err)
	}
	return []age.Recipient{r}, nil
}

// Passphrase returns the passphrase of the key what names:
// PassphraseFile's first line when given (what a command line says beats
// what its environment says), else $WRIT_PASSPHRASE, else asked on the
// terminal that Stdin is (twice when confirm). With none of the three it
// is bad usage.
func (s *Source) Passphrase(what string, confirm bool) ([]byte, error) {
	if path := s.PassphraseFile; path != "" {
		data, err := fileio.ReadWhole(s.Stdin, path, MaxPassphraseFile)
		if err != nil {
			return nil, err
		}
		line, _, _ := strings.Cut(string(data), "\n")
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			return nil, exitcode.Input(fmt.Errorf("%s: the passphrase file's first line is empty", path))
		}
		return []byte(line), nil
	}
	if v := os.Getenv("WRIT_PASSPHRASE"); v != "" {
		return []byte(v), nil
	}
	in, ok := s.Stdin.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return nil, exitcode.Usagef("no passphrase for %s: set WRIT_PASSPHRASE, pass --passphrase-file FILE, or run on a terminal", what)
	}
	ask := func(prompt string) ([]byte, error) {
		fmt.Fprintf(s.Prompt, "%s: ", prompt)
		p, err := term.ReadPassword(int(in.Fd()))
		fmt.Fprintln(s.Prompt)
		return p, err
	}
	p, err := ask("passphrase for " + what)
	if err != nil {
		return nil, exitcode.Input(err)
	}
	if len(p) == 0 {
		return nil, exitcode.Usagef("empty passphrase")
	}
	if confirm {
		again, err := ask("again")
		if err != nil {
			return nil, exitcode.Input(err)
		}
		if !bytes.Equal(p, again) {
			return nil, exitcode.Usagef("the passphrases do not match")
		}
	}
	return p, nil
}

// TokenPIN returns the sign.KeyOptions.PIN callback: the user PIN of the
// PKCS#11 token uri (printed without PIN) names, asked on the terminal
// that Stdin is, without echo. With no terminal it is an error saying to
// give pin-source; a PIN is never read from a flag or the environment.
func (s *Source) TokenPIN() func(uri string) ([]byte, error) {
	return func(uri string) ([]byte, error) {
		in, ok := s.Stdin.(*os.File)
		if !ok || !term.IsTerminal(int(in.Fd())) {
			return nil, errors.New("no terminal to ask for the PIN on: add pin-source=/path/to/file to the URI's query (a file readable only by you holding the PIN), e.g. 'pkcs11:token=T;object=O?pin-source=/etc/writ/pin'")
		}
		fmt.Fprintf(s.Prompt, "PIN for %s: ", uri)
		p, err := term.ReadPassword(int(in.Fd()))
		fmt.Fprintln(s.Prompt)
		if err != nil {
			return nil, err
		}
		if len(p) == 0 {
			return nil, errors.New("empty PIN")
		}
		return p, nil
	}
}
