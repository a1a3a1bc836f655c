// Package runnerkey reads, from a command line's flags, how a runner's key
// (the key that signs its decision log) is made or unlocked: the flags
// that choose its protection at the first admission, the choice they make
// (keys.Choice), and keys.Resolve's refusals named by those flags.
//
// Errors are *exitcode.Error, bad usage or bad input (exit 2), except
// those of internal/secrets (reading a passphrase or an identity), which
// are returned as they are.
package runnerkey

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/dirhint"
	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/internal/secrets"
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// ProtectionFlag chooses, at a runner's first admission, how its key is
// kept (keys.Protection).
var ProtectionFlag = &cli.StringFlag{
	Name: "runner-key-protection",
	Usage: "how a new runner keeps the key that signs its decision log, chosen at the first admission and fixed after (stated in DIR/runner.protection): " +
		"`HOW` is file (the default: DIR/runner.key unencrypted, mode 0600, refused unless owned by this account and closed to group and others; no cost per admission) " +
		"or passphrase (DIR/runner.key age-encrypted to the passphrase or --recipient, unlocked at every admission: about 1.4 s and 256 MiB at --work-factor 18) " +
		"or pkcs11 (a key made in a PKCS#11 token, given with --runner-key; it never leaves the token); LIMITATIONS.md says what each protects against",
}

// TokenKeyFlag names, at a runner's first admission, a key made in a
// PKCS#11 token to sign its decision log (keys.ProtectToken).
var TokenKeyFlag = &cli.StringFlag{
	Name:  "runner-key",
	Usage: "at a runner's first admission: keep its key in a PKCS#11 token, this `URI` (pkcs11:token=T;object=O, made with writ key generate --out URI --pub FILE); implies --runner-key-protection pkcs11",
}

// secretFlags give a secret for an age-encrypted runner key: with a key
// kept as a plain file they are refused, since a user who gives one
// believes the key is encrypted. WRIT_PASSPHRASE, shared by every writ
// command, and --work-factor, a parameter of a passphrase encryption, are
// not read then.
var secretFlags = []string{"passphrase-file", "identity", "recipient"}

// ChoiceOf is what the command line c asked about the runner key: the
// value of ProtectionFlag (and whether it was given), of TokenKeyFlag, and
// the first of --passphrase-file, --identity and --recipient given.
func ChoiceOf(c *cli.Context) keys.Choice {
	choice := keys.Choice{Protection: c.String(ProtectionFlag.Name), ProtectionGiven: c.IsSet(ProtectionFlag.Name), TokenKey: c.String(TokenKeyFlag.Name)}
	for _, f := range secretFlags {
		if c.IsSet(f) {
			choice.Secret = f
			break
		}
	}
	return choice
}

// Params returns how the runner key of the ledger at dir is made or
// unlocked, as keys.Resolve decides from choice: the protection it is
// stated to have (or, for a new runner, the one asked, by default
// keys.DefaultProtection) and, for a key kept with a passphrase, the
// identities from src that unlock it or the recipients a new one is
// encrypted to; for a key in a token, src's PIN. A dir that is no ledger
// directory is dirhint.LedgerDir's error, before anything else; Resolve's
// refusals are bad usage naming the flags (Refusal). note, when not "",
// is a note for stderr: a new key kept as file while WRIT_PASSPHRASE or
// --work-factor is set, neither of which applies to it.
func Params(dir string, choice keys.Choice, src *secrets.Source) (kp ledgerdir.KeyParams, note string, err error) {
	kp = ledgerdir.KeyParams{Rand: rand.Reader}
	if err := dirhint.LedgerDir(dir); err != nil {
		return kp, "", err // before any note about a key that will not be made
	}
	r, err := keys.Resolve(dir, choice)
	if err != nil {
		return kp, "", Refusal(r, choice, err)
	}
	kp.Protection, kp.TokenKey = r.Protection, r.TokenKey
	switch kp.Protection {
	case keys.ProtectFile:
		if !r.Exists && (os.Getenv("WRIT_PASSPHRASE") != "" || src.WorkFactorSet) {
			note = fmt.Sprintf("this runner's new key is kept as file (%s unencrypted, mode 0600); WRIT_PASSPHRASE and --work-factor do not apply to it; --%s passphrase at the first admission keeps it age-encrypted instead",
				filepath.Join(dir, ledgerdir.RunnerKey+".key"), ProtectionFlag.Name)
		}
	case keys.ProtectToken:
		kp.PIN = src.TokenPIN()
	case keys.ProtectPassphrase:
		if r.Exists {
			kp.Identities, err = src.Identities("the runner key")
		} else {
			kp.Recipients, err = src.NewKeyRecipients("the new runner key")
		}
	default:
		err = errors.New("internal: no runner key protection chosen")
	}
	return kp, note, err
}

// Refusal maps a refusal err of keys.Resolve (with what it resolved, r,
// from choice) to the flags: bad usage (exitcode.Usagef) naming the flag
// for what was asked, bad input (exitcode.Input) for a statement that
// does not read or any other error.
func Refusal(r keys.Resolved, choice keys.Choice, err error) error {
	protFlag, tokenFlag := ProtectionFlag.Name, TokenKeyFlag.Name
	switch {
	case errors.Is(err, keys.ErrProtectionName):
		return exitcode.Usagef("--%s %q: one of %s", protFlag, choice.Protection, strings.Join(keys.ProtectionNames(), ", "))
	case errors.Is(err, keys.ErrNotTokenURI):
		return exitcode.Usagef("--%s %q: a PKCS#11 URI (pkcs11:token=T;object=O)", tokenFlag, choice.TokenKey)
	case errors.Is(err, keys.ErrTokenKeyProtection):
		return exitcode.Usagef("--%s is a key in a token: it goes with --%s pkcs11, not %s", tokenFlag, protFlag, r.Asked)
	case errors.Is(err, keys.ErrTokenKeyExists):
		return exitcode.Usagef("--%s is read at a runner's first admission only: this runner's key is already made (%s)", tokenFlag, r.Statement)
	case errors.Is(err, keys.ErrNoTokenKey):
		return exitcode.Usagef("--%s pkcs11: give the key's URI with --%s pkcs11:token=T;object=O", protFlag, tokenFlag)
	case errors.Is(err, keys.ErrProtectionFixed):
		return exitcode.Usagef("--%s %s: this runner's key is kept as %s (%s): the protection is chosen at the runner's first admission and fixed after", protFlag, r.Asked, r.Stated, r.Statement)
	case errors.Is(err, keys.ErrSecretUnused) && r.Protection == keys.ProtectToken:
		return exitcode.Usagef("--%s: this runner's key is kept in a PKCS#11 token, which takes its PIN (pin-source in the URI, or the terminal), no passphrase or identity", choice.Secret)
	case errors.Is(err, keys.ErrSecretUnused) && r.Exists:
		return exitcode.Usagef("--%s: this runner's key is kept as file (%s: unencrypted, readable only by this account), which takes no passphrase or identity; drop --%s", choice.Secret, r.Statement, choice.Secret)
	case errors.Is(err, keys.ErrSecretUnused):
		return exitcode.Usagef("--%s: a new runner's key is kept as file by default (unencrypted, readable only by this account), which takes no passphrase or identity; to keep it age-encrypted, add --%s passphrase", choice.Secret, protFlag)
	}
	return exitcode.Input(err)
}
