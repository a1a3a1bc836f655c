package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// runnerKeyProtectionFlag chooses, at a runner's first admission, how its
// key is kept (keys.Protection).
var runnerKeyProtectionFlag = &cli.StringFlag{
	Name: "runner-key-protection",
	Usage: "how a new runner keeps the key that signs its decision log, chosen at the first admission and fixed after (stated in DIR/runner.protection): " +
		"`HOW` is file (the default: DIR/runner.key unencrypted, mode 0600, refused unless owned by this account and closed to group and others; no cost per admission) " +
		"or passphrase (DIR/runner.key age-encrypted to the passphrase or --recipient, unlocked at every admission: about 1.4 s and 256 MiB at --work-factor 18) " +
		"or pkcs11 (a key made in a PKCS#11 token, given with --runner-key; it never leaves the token); LIMITATIONS.md says what each protects against",
}

// runnerTokenKeyFlag names, at a runner's first admission, a key made in
// a PKCS#11 token to sign its decision log (keys.ProtectToken).
var runnerTokenKeyFlag = &cli.StringFlag{
	Name:  "runner-key",
	Usage: "at a runner's first admission: keep its key in a PKCS#11 token, this `URI` (pkcs11:token=T;object=O, made with writ key generate --out URI --pub FILE); implies --runner-key-protection pkcs11",
}

// runnerSecretFlags give a secret for an age-encrypted runner key: with a
// key kept as a plain file they are refused, since a user who gives one
// believes the key is encrypted. WRIT_PASSPHRASE, shared by every writ
// command, and --work-factor, a parameter of a passphrase encryption, are
// not read then.
var runnerSecretFlags = []string{"passphrase-file", "identity", "recipient"}

// runnerKeyParams returns how the runner key of the ledger at dir is
// made or unlocked, as keys.Resolve decides from the flags: the
// protection it is stated to have (or, for a new runner,
// --runner-key-protection, by default keys.DefaultProtection) and, for a
// key kept with a passphrase, the identities that unlock it or the
// recipients a new one is encrypted to. Resolve's refusals are bad usage
// naming the flags (runnerKeyUsage); a statement that does not read is
// bad input.
func runnerKeyParams(c *cli.Context, dir string) (ledgerdir.KeyParams, error) {
	kp := ledgerdir.KeyParams{Rand: rand.Reader}
	if err := isLedgerDir(dir); err != nil {
		return kp, err // before any note about a key that will not be made
	}
	choice := keys.Choice{Protection: c.String(runnerKeyProtectionFlag.Name), ProtectionGiven: c.IsSet(runnerKeyProtectionFlag.Name), TokenKey: c.String(runnerTokenKeyFlag.Name)}
	for _, f := range runnerSecretFlags {
		if c.IsSet(f) {
			choice.Secret = f
			break
		}
	}
	r, err := keys.Resolve(dir, choice)
	if err != nil {
		return kp, runnerKeyUsage(r, choice, err)
	}
	kp.Protection, kp.TokenKey = r.Protection, r.TokenKey
	switch kp.Protection {
	case keys.ProtectFile:
		if !r.Exists && (os.Getenv("WRIT_PASSPHRASE") != "" || c.IsSet("work-factor")) {
			diag(c, levelNote, "this runner's new key is kept as file (%s unencrypted, mode 0600); WRIT_PASSPHRASE and --work-factor do not apply to it; --%s passphrase at the first admission keeps it age-encrypted instead",
				filepath.Join(dir, ledgerdir.RunnerKey+".key"), runnerKeyProtectionFlag.Name)
		}
	case keys.ProtectToken:
		kp.PIN = tokenPIN(c)
	case keys.ProtectPassphrase:
		if r.Exists {
			kp.Identities, err = unlockIdentities(c, "the runner key")
		} else {
			kp.Recipients, err = newKeyRecipients(c, "the new runner key")
		}
	default:
		err = errors.New("internal: no runner key protection chosen")
	}
	return kp, err
}

// runnerKeyUsage maps a refusal of keys.Resolve to the flags: bad usage
// for what was asked, bad input for a statement that does not read.
func runnerKeyUsage(r keys.Resolved, choice keys.Choice, err error) error {
	protFlag, tokenFlag := runnerKeyProtectionFlag.Name, runnerTokenKeyFlag.Name
	switch {
	case errors.Is(err, keys.ErrProtectionName):
		return usageErr("--%s %q: one of %s", protFlag, choice.Protection, strings.Join(keys.ProtectionNames(), ", "))
	case errors.Is(err, keys.ErrNotTokenURI):
		return usageErr("--%s %q: a PKCS#11 URI (pkcs11:token=T;object=O)", tokenFlag, choice.TokenKey)
	case errors.Is(err, keys.ErrTokenKeyProtection):
		return usageErr("--%s is a key in a token: it goes with --%s pkcs11, not %s", tokenFlag, protFlag, r.Asked)
	case errors.Is(err, keys.ErrTokenKeyExists):
		return usageErr("--%s is read at a runner's first admission only: this runner's key is already made (%s)", tokenFlag, r.Statement)
	case errors.Is(err, keys.ErrNoTokenKey):
		return usageErr("--%s pkcs11: give the key's URI with --%s pkcs11:token=T;object=O", protFlag, tokenFlag)
	case errors.Is(err, keys.ErrProtectionFixed):
		return usageErr("--%s %s: this runner's key is kept as %s (%s): the protection is chosen at the runner's first admission and fixed after", protFlag, r.Asked, r.Stated, r.Statement)
	case errors.Is(err, keys.ErrSecretUnused) && r.Protection == keys.ProtectToken:
		return usageErr("--%s: this runner's key is kept in a PKCS#11 token, which takes its PIN (pin-source in the URI, or the terminal), no passphrase or identity", choice.Secret)
	case errors.Is(err, keys.ErrSecretUnused) && r.Exists:
		return usageErr("--%s: this runner's key is kept as file (%s: unencrypted, readable only by this account), which takes no passphrase or identity; drop --%s", choice.Secret, r.Statement, choice.Secret)
	case errors.Is(err, keys.ErrSecretUnused):
		return usageErr("--%s: a new runner's key is kept as file by default (unencrypted, readable only by this account), which takes no passphrase or identity; to keep it age-encrypted, add --%s passphrase", choice.Secret, protFlag)
	}
	return inputErr(err)
}

// isLedgerDir refuses, as bad input naming --ledger, a directory that
// holds no authority log: a path that does not exist, the authority log's
// own directory, or a file (an export is audited with --export, or
// imported with writ ledger import).
func isLedgerDir(dir string) error {
	fi, err := os.Stat(filepath.Join(dir, ledgerdir.AuthorityDir))
	if err == nil && fi.IsDir() {
		return nil
	}
	hint := "--ledger takes the ledger directory, the one that holds " + ledgerdir.AuthorityDir + "/ (made by writ ledger init or writ ledger import --dir DIR)"
	if filepath.Base(filepath.Clean(dir)) == ledgerdir.AuthorityDir {
		hint = "--ledger " + filepath.Dir(filepath.Clean(dir)) + ": the ledger is the directory above " + ledgerdir.AuthorityDir + "/"
	} else if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		hint = dir + " is a file, not a ledger directory; a runner's ledger is made by writ ledger import --dir DIR from an export (writ ledger export), or synced with writ ledger sync --dir DIR"
	} else if err != nil {
		hint = dir + " does not exist; " + hint
	}
	return inputErr(fmt.Errorf("--ledger %s: %w: it holds no %s log", dir, ledger.ErrNotALog, ledgerdir.AuthorityDir), hint)
}
