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
	"github.com/writ-ledger/writ/sign"
)

// runnerKeyProtectionFlag chooses, at a runner's first admission, how its
// key is kept (ledger.KeyProtection).
var runnerKeyProtectionFlag = &cli.StringFlag{
	Name: "runner-key-protection",
	Usage: "how a new runner keeps the key that signs its decision log, chosen at the first admission and fixed after (stated in DIR/runner.protection): " +
		"`HOW` is file (the default: DIR/runner.key unencrypted, mode 0600, refused unless owned by this account and closed to group and others; no cost per admission) " +
		"or passphrase (DIR/runner.key age-encrypted to the passphrase or --recipient, unlocked at every admission: about 1.4 s and 256 MiB at --work-factor 18) " +
		"or pkcs11 (a key made in a PKCS#11 token, given with --runner-key; it never leaves the token); LIMITATIONS.md says what each protects against",
}

// runnerTokenKeyFlag names, at a runner's first admission, a key made in
// a PKCS#11 token to sign its decision log (ledger.ProtectToken).
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
// made or unlocked: the protection it is stated to have (or, for a new
// runner, --runner-key-protection, by default ledger.DefaultRunnerProtection)
// and, for a key kept with a passphrase, the identities that unlock it or
// the recipients a new one is encrypted to. Bad usage: a
// --runner-key-protection other than the stated one, or a secret flag
// for a key kept as a file.
func runnerKeyParams(c *cli.Context, dir string) (ledger.KeyParams, error) {
	kp := ledger.KeyParams{Rand: rand.Reader}
	if err := isLedgerDir(dir); err != nil {
		return kp, err // before any note about a key that will not be made
	}
	stated, exists, err := ledger.RunnerKeyProtection(dir)
	if err != nil {
		return kp, inputErr(err)
	}
	var asked ledger.KeyProtection
	if c.IsSet(runnerKeyProtectionFlag.Name) {
		if asked, err = ledger.ParseKeyProtection(c.String(runnerKeyProtectionFlag.Name)); err != nil {
			return kp, usageErr("--%s %q: one of %s", runnerKeyProtectionFlag.Name, c.String(runnerKeyProtectionFlag.Name), strings.Join(ledger.KeyProtectionNames(), ", "))
		}
	}
	if ref := c.String(runnerTokenKeyFlag.Name); ref != "" {
		switch {
		case !sign.IsTokenURI(ref):
			return kp, usageErr("--%s %q: a PKCS#11 URI (pkcs11:token=T;object=O)", runnerTokenKeyFlag.Name, ref)
		case asked != 0 && asked != ledger.ProtectToken:
			return kp, usageErr("--%s is a key in a token: it goes with --%s pkcs11, not %s", runnerTokenKeyFlag.Name, runnerKeyProtectionFlag.Name, asked)
		case exists:
			return kp, usageErr("--%s is read at a runner's first admission only: this runner's key is already made (%s)", runnerTokenKeyFlag.Name, filepath.Join(dir, ledger.RunnerProtectionFile))
		}
		asked, kp.TokenKey = ledger.ProtectToken, ref
	} else if asked == ledger.ProtectToken && !exists {
		return kp, usageErr("--%s pkcs11: give the key's URI with --%s pkcs11:token=T;object=O", runnerKeyProtectionFlag.Name, runnerTokenKeyFlag.Name)
	}
	statement := filepath.Join(dir, ledger.RunnerProtectionFile)
	kp.Protection = ledger.DefaultRunnerProtection
	switch {
	case exists && asked != 0 && asked != stated:
		return kp, usageErr("--%s %s: this runner's key is kept as %s (%s): the protection is chosen at the runner's first admission and fixed after", runnerKeyProtectionFlag.Name, asked, stated, statement)
	case exists:
		kp.Protection = stated
	case asked != 0:
		kp.Protection = asked
	}
	switch kp.Protection {
	case ledger.ProtectFile:
		for _, f := range runnerSecretFlags {
			if !c.IsSet(f) {
				continue
			}
			if exists {
				return kp, usageErr("--%s: this runner's key is kept as file (%s: unencrypted, readable only by this account), which takes no passphrase or identity; drop --%s", f, statement, f)
			}
			return kp, usageErr("--%s: a new runner's key is kept as file by default (unencrypted, readable only by this account), which takes no passphrase or identity; to keep it age-encrypted, add --%s passphrase", f, runnerKeyProtectionFlag.Name)
		}
		if !exists && (os.Getenv("WRIT_PASSPHRASE") != "" || c.IsSet("work-factor")) {
			diag(c, levelNote, "this runner's new key is kept as file (%s unencrypted, mode 0600); WRIT_PASSPHRASE and --work-factor do not apply to it; --%s passphrase at the first admission keeps it age-encrypted instead",
				filepath.Join(dir, ledger.RunnerKey+".key"), runnerKeyProtectionFlag.Name)
		}
	case ledger.ProtectToken:
		for _, f := range runnerSecretFlags {
			if c.IsSet(f) {
				return kp, usageErr("--%s: this runner's key is kept in a PKCS#11 token, which takes its PIN (pin-source in the URI, or the terminal), no passphrase or identity", f)
			}
		}
		kp.PIN = tokenPIN(c)
	case ledger.ProtectPassphrase:
		if exists {
			kp.Identities, err = unlockIdentities(c, "the runner key")
		} else {
			kp.Recipients, err = newKeyRecipients(c, "the new runner key")
		}
	default:
		err = errors.New("internal: no runner key protection chosen")
	}
	return kp, err
}

// isLedgerDir refuses, as bad input naming --ledger, a directory that
// holds no authority log: a path that does not exist, the authority log's
// own directory, or a file (an export is audited with --export, or
// imported with writ ledger import).
func isLedgerDir(dir string) error {
	fi, err := os.Stat(filepath.Join(dir, ledger.AuthorityDir))
	if err == nil && fi.IsDir() {
		return nil
	}
	hint := "--ledger takes the ledger directory, the one that holds " + ledger.AuthorityDir + "/ (made by writ ledger init or writ ledger import --dir DIR)"
	if filepath.Base(filepath.Clean(dir)) == ledger.AuthorityDir {
		hint = "--ledger " + filepath.Dir(filepath.Clean(dir)) + ": the ledger is the directory above " + ledger.AuthorityDir + "/"
	} else if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		hint = dir + " is a file, not a ledger directory; a runner's ledger is made by writ ledger import --dir DIR from an export (writ ledger export), or synced with writ ledger sync --dir DIR"
	} else if err != nil {
		hint = dir + " does not exist; " + hint
	}
	return inputErr(fmt.Errorf("--ledger %s: %w: it holds no %s log", dir, ledger.ErrNotALog, ledger.AuthorityDir), hint)
}
