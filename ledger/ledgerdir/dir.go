package ledgerdir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"filippo.io/age"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/sign"
)

// Names inside a ledger directory (see the package doc).
const (
	AuthorityDir  = "authority"
	DecisionsDir  = "decisions"
	CheckpointKey = "checkpoint" // + ".key", ".pub"
	RunnerKey     = "runner"     // + ".key", ".pub"
)

// DecisionsSuffix is appended to the authority origin (with the first 16
// hex digits of the runner's key id) to name the decision log: a
// decision log's origin is AUTHORITY + DecisionsSuffix + 16 hex digits.
const DecisionsSuffix = "/decisions/"

// MaxLedgerOrigin is the longest authority origin Init accepts, in bytes:
// the decision log's origin adds 27 bytes and must stay within the 128
// that ValidOrigin allows.
const MaxLedgerOrigin = 128 - len(DecisionsSuffix) - 16

// KeyParams says how to create or unlock a log's key file: the age
// recipients a new key is encrypted to (sign.ScryptRecipient for a
// passphrase, or X25519 recipients), the identities that unlock an
// existing one, and the randomness for new keys.
type KeyParams struct {
	Recipients []age.Recipient
	Identities []age.Identity
	Rand       io.Reader
	// Protection is how the runner key is kept (OpenDecisions; Init does
	// not read it).
	Protection keys.Protection
	// TokenKey is the pkcs11: URI of a runner key made in a token, for a
	// new runner under keys.ProtectToken; PIN is asked for a token URI without
	// pin-source (nil: no prompt).
	TokenKey string
	PIN      func(uri string) ([]byte, error)
}

// Init creates a ledger directory with a new checkpoint key file
// (DIR/checkpoint.key, encrypted with kp) and an empty authority log with
// the given origin, and returns that log open for appending: Dir.Init
// without a first step. The caller appends the root record.
func Init(dir, origin string, kp KeyParams) (*ledger.Log, error) {
	return Dir(dir).Init(origin, NewKey{Recipients: kp.Recipients, Rand: kp.Rand}, nil)
}

// OpenAuthority opens the authority log of the ledger at dir. Without
// identities it is opened for reading and verifying only, read-only when
// Badger can (OpenReadOnly: readers share the log with each other and with
// a runner's admission server), else as Open does (a store a crashed
// writer left needs recovery that only a writing open performs);
// otherwise the checkpoint key is unlocked with them, so that Append
// works.
func OpenAuthority(dir string, ids []age.Identity) (*ledger.Log, error) {
	if len(ids) == 0 {
		return openReading(filepath.Join(dir, AuthorityDir))
	}
	var key *sign.PrivateKey
	if len(ids) > 0 {
		var err error
		key, err = sign.LoadPrivateKey(filepath.Join(dir, CheckpointKey+".key"), ids...)
		if err != nil {
			return nil, fmt.Errorf("checkpoint key: %w", err)
		}
		// A passphrase's scrypt (256 MiB at age's work factor) left
		// that much free heap: give it back before the store opens, or
		// its memtable is cut from those dirty pages and stays resident
		// (a writer service held 21 MiB more in one start of three).
		debug.FreeOSMemory()
	}
	return OpenWaiting(filepath.Join(dir, AuthorityDir), key, WriterLockWait)
}

// WriterLockWait is how long a writer of the authority log waits for
// readers to let go of it (a runner's admission server reads it after
// every change, for as long as verifying it takes).
const WriterLockWait = 15 * time.Second

// OpenWaiting is Open, retrying for up to wait while another process
// holds the log (ErrLocked after that).
func OpenWaiting(dir string, key *sign.PrivateKey, wait time.Duration) (*ledger.Log, error) {
	deadline := time.Now().Add(wait)
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		l, err := ledger.Open(dir, key)
		if !errors.Is(err, ledger.ErrLocked) || time.Now().After(deadline) {
			return l, err
		}
		time.Sleep(pause)
	}
}

// HasDecisions reports whether the ledger at dir has a decision log. It
// returns an *IntegrityError (ErrTampered) when the log is absent but the
// runner key that signs it exists, or when the caller expects one
// (expected): a deleted decision log is never mistaken for "no decisions".
func HasDecisions(dir string, expected bool) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, DecisionsDir)); err == nil {
		return true, nil
	}
	if RunnerKeyExists(dir) {
		return false, &ledger.IntegrityError{Index: -1, What: "decision log missing", Detail: "the runner key exists, so the decision log was deleted"}
	}
	if expected {
		return false, &ledger.IntegrityError{Index: -1, What: "decision log missing", Detail: "a decision log verifier key was given, but the ledger has no decision log"}
	}
	return false, nil
}

// OpenDecisions opens the decision log of the ledger at dir for
// appending, loading the runner key as DIR/runner.protection says
// (keys.RunnerProtection): a key kept as keys.ProtectPassphrase is unlocked with
// kp.Identities, one kept as keys.ProtectFile takes none; kp.Protection, if not
// zero, must be the stated one (keys.ErrProtection). On first use it
// creates the runner key (DIR/runner.key and DIR/runner.pub) kept as
// kp.Protection (when zero: keys.ProtectPassphrase if kp.Recipients are given,
// else keys.ProtectFile), states that protection in DIR/runner.protection, and
// creates the log, whose origin is authorityOrigin + "/decisions/" + the
// first 16 hex digits of the runner's key id; if that fails, the new files
// are removed again. A runner key without its decision log means the log
// was deleted: that is an *IntegrityError (ErrTampered), and nothing is
// created.
func OpenDecisions(dir, authorityOrigin string, kp KeyParams) (*ledger.Log, error) {
	keyPath := filepath.Join(dir, RunnerKey+".key")
	logDir := filepath.Join(dir, DecisionsDir)
	var keyErr error
	if !RunnerKeyExists(dir) {
		keyErr = os.ErrNotExist
	}
	_, logErr := os.Stat(logDir)
	switch {
	case errors.Is(keyErr, os.ErrNotExist) && errors.Is(logErr, os.ErrNotExist):
		if authorityOrigin == "" {
			return nil, errors.New("cannot create the decision log without the authority log's origin")
		}
		key, err := newRunnerKey(dir, kp)
		if err != nil {
			return nil, fmt.Errorf("creating runner key: %w", err)
		}
		l, err := ledger.Create(logDir, authorityOrigin+DecisionsSuffix+key.Public().ID()[:16], key, nil)
		if err != nil {
			removeRunnerKey(dir)
			os.RemoveAll(logDir)
			return nil, err
		}
		return l, nil
	case keyErr == nil && errors.Is(logErr, os.ErrNotExist):
		return nil, &ledger.IntegrityError{Index: -1, What: "decision log missing", Detail: "the runner key exists, so the decision log was deleted; nothing was created"}
	case errors.Is(keyErr, os.ErrNotExist) && logErr == nil:
		return nil, fmt.Errorf("%w: %s holds a decision log but not the runner key (%s) that signs it: this is another runner's ledger, or the key was removed; admit where that key is, or give this runner a directory of its own (writ ledger import --dir NEW FILE from an export of the authority log)", ledger.ErrNoRunnerKey, dir, keyPath)
	}
	key, err := loadRunnerKey(dir, kp)
	if err != nil {
		return nil, fmt.Errorf("runner key: %w", err)
	}
	return ledger.Open(logDir, key)
}

// RunnerKeyExists reports whether the ledger at dir has a runner key, that
// is, whether OpenDecisions will unlock a key rather than create one.
func RunnerKeyExists(dir string) bool {
	return keys.RunnerExists(dir)
}

// OpenDecisionsReadOnly opens the decision log of the ledger at dir for
// reading and verifying, read-only when Badger can (see openReading).
func OpenDecisionsReadOnly(dir string) (*ledger.Log, error) {
	return openReading(filepath.Join(dir, DecisionsDir))
}

// openReading opens a log to read it: read-only (OpenReadOnly: shared
// with other readers, nothing written, no memtable or block cache
// allocated), else as Open does, for a store a crashed writer left that
// needs the recovery only a writing open performs.
func openReading(dir string) (*ledger.Log, error) {
	l, err := ledger.OpenReadOnly(dir)
	if err == nil || errors.Is(err, ledger.ErrLocked) || errors.Is(err, ledger.ErrNotALog) || errors.Is(err, ledger.ErrTampered) {
		return l, err
	}
	return ledger.Open(dir, nil)
}

// DecisionsVerifierKey returns the verifier key of the decision log of
// the ledger at dir without opening that log (a running admission server
// holds it): the runner's public key (DIR/runner.pub) under the decision
// log's origin, the authority log's origin + "/decisions/" + the first 16
// hex digits of its key id. Errors: the runner key's public file is
// missing or unreadable (no decision log was created yet), or the
// authority log cannot be opened.
func DecisionsVerifierKey(dir string) (string, error) {
	pub, err := sign.LoadPublicKey(filepath.Join(dir, RunnerKey+".pub"))
	if err != nil {
		return "", fmt.Errorf("the runner key: %w (a decision log is made by the first `writ admit`)", err)
	}
	auth, err := OpenAuthority(dir, nil)
	if err != nil {
		return "", err
	}
	origin := auth.Origin()
	auth.Close()
	return formats.VerifierKey(origin+DecisionsSuffix+pub.ID()[:16], pub)
}
