package ledgerdir

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"filippo.io/age"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/sign"
)

// Dir is a ledger directory, by its path: it names the files the
// directory holds (see the package doc for the layout) and opens its
// logs. The zero value is the current directory.
type Dir string

// AuthorityStore returns the path of the authority log's store,
// DIR/authority.
func (d Dir) AuthorityStore() string { return filepath.Join(string(d), AuthorityDir) }

// DecisionsStore returns the path of the decision log's store,
// DIR/decisions.
func (d Dir) DecisionsStore() string { return filepath.Join(string(d), DecisionsDir) }

// checkpointKeyFiles are the files a checkpoint key may leave in a ledger
// directory: a key file and its public key, or a token key's URI and its
// public key.
var checkpointKeyFiles = []string{CheckpointKey + ".key", CheckpointKey + ".pub", CheckpointKey + ".uri"}

// NewKey says which key signs a new ledger's checkpoints: a new key file
// (DIR/checkpoint.key, age-encrypted to Recipients, made from Rand), or,
// when Token is set, a key that already exists in a PKCS#11 token, whose
// URI (TokenURI) and public key the directory keeps (DIR/checkpoint.uri,
// DIR/checkpoint.pub). A URI naming a module-path is refused (keys.ErrKeyRef):
// the module of a stored key comes from $WRIT_PKCS11_MODULE.
type NewKey struct {
	Recipients []age.Recipient
	Rand       io.Reader
	TokenURI   string
	Token      *sign.PrivateKey
}

// FirstEntryError is the error of Dir.Init's first step, the caller's
// (appending the root record): the ledger was created and is removed
// again. Its message is Err's.
type FirstEntryError struct{ Err error }

func (e *FirstEntryError) Error() string { return e.Err.Error() }

// Unwrap returns the first step's error.
func (e *FirstEntryError) Unwrap() error { return e.Err }

// Init creates a ledger at d, which must not exist or be empty: its
// checkpoint key (key), an empty authority log with the given origin (1
// to MaxLedgerOrigin bytes, formats.ValidOrigin), and then calls first
// (when not nil) with that log open for appending; first appends the
// root record. It returns the log open for appending. Init is atomic:
// when any step fails, first's included, everything it made is removed
// again (the key files, the authority store, and the directory when Init
// created it; a directory that existed is kept, and one that was not
// empty is refused before anything is made). Errors: first's, as a
// *FirstEntryError; else those of making the directory, the key
// (sign.ErrExists and kin, keys.ErrKeyRef) and the log.
func (d Dir) Init(origin string, key NewKey, first func(*ledger.Log) error) (*ledger.Log, error) {
	created, err := prepareDir(string(d), origin)
	if err != nil {
		return nil, err
	}
	l, err := d.create(origin, key)
	if err == nil && first != nil {
		if ferr := first(l); ferr != nil {
			l.Close()
			l, err = nil, &FirstEntryError{Err: ferr}
		}
	}
	if err != nil {
		d.removeInit(created)
		return nil, err
	}
	return l, nil
}

// create writes the checkpoint key and creates the authority log.
func (d Dir) create(origin string, key NewKey) (*ledger.Log, error) {
	k := key.Token
	if k == nil {
		var err error
		if k, err = sign.GenerateKeyFiles(filepath.Join(string(d), CheckpointKey), key.Recipients, key.Rand); err != nil {
			return nil, err
		}
	} else if err := keys.WriteRef(string(d), CheckpointKey, key.TokenURI, k); err != nil {
		return nil, err
	}
	return ledger.CreateWithHistory(d.AuthorityStore(), origin, k, nil)
}

// removeInit removes what a failed Init made: the authority store and the
// checkpoint key's files (none of them existed, since the directory was
// empty), and the directory itself when Init created it and it is empty
// again.
func (d Dir) removeInit(created bool) {
	os.RemoveAll(d.AuthorityStore())
	for _, name := range checkpointKeyFiles {
		os.Remove(filepath.Join(string(d), name))
	}
	if created {
		os.Remove(string(d))
	}
}

// prepareDir checks a new ledger's directory (absent or empty) and
// origin, and creates the directory (0700); created reports whether it
// did not exist.
func prepareDir(dir, origin string) (created bool, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case err == nil && len(entries) > 0:
		return false, fmt.Errorf("%s: directory is not empty", dir)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return false, err
	}
	created = err != nil
	if !formats.ValidOrigin(origin) || len(origin) > MaxLedgerOrigin {
		return false, fmt.Errorf("origin %q: 1 to %d printable ASCII characters, no space or '+'", origin, MaxLedgerOrigin)
	}
	return created, os.MkdirAll(dir, 0o700)
}

// ErrNoDecisionLog: the ledger directory has no decision log yet (the
// first admission creates it).
var ErrNoDecisionLog = errors.New("no decision log yet")

// Log names for OpenLog and OpenExport.
const (
	AuthorityLog = "authority"
	DecisionsLog = "decisions"
)

// OpenLog opens the log named name (AuthorityLog or DecisionsLog) for
// reading and verifying (OpenAuthority without identities,
// OpenDecisionsReadOnly). Errors: ErrNoDecisionLog (wrapped, naming d)
// for a decision log not made yet, HasDecisions' *IntegrityError for one
// that was deleted, an unknown name, and those of the open.
func (d Dir) OpenLog(name string) (*ledger.Log, error) {
	switch name {
	case AuthorityLog:
		return OpenAuthority(string(d), nil)
	case DecisionsLog:
		if has, err := HasDecisions(string(d), false); err != nil {
			return nil, err
		} else if !has {
			return nil, fmt.Errorf("%s: %w", d, ErrNoDecisionLog)
		}
		return OpenDecisionsReadOnly(string(d))
	}
	return nil, fmt.Errorf("log %q: %s or %s", name, AuthorityLog, DecisionsLog)
}

// OpenExport opens, for reading, the logs an export of d takes: the
// authority log, and the decision log when d has one and authorityOnly
// is false. It returns their names (AuthorityLog, DecisionsLog) and the
// open logs, in that order; the caller closes them. On an error, none is
// left open. Errors: those of OpenLog and HasDecisions.
func (d Dir) OpenExport(authorityOnly bool) ([]string, []*ledger.Log, error) {
	auth, err := d.OpenLog(AuthorityLog)
	if err != nil {
		return nil, nil, err
	}
	has, err := HasDecisions(string(d), false)
	if err != nil || !has || authorityOnly {
		if err != nil {
			auth.Close()
			return nil, nil, err
		}
		return []string{AuthorityLog}, []*ledger.Log{auth}, nil
	}
	dec, err := d.OpenLog(DecisionsLog)
	if err != nil {
		auth.Close()
		return nil, nil, err
	}
	return []string{AuthorityLog, DecisionsLog}, []*ledger.Log{auth, dec}, nil
}

// VerifierKey returns the verifier key the authority log of d stores
// (Log.Key), read from the store opened read-only (OpenReadOnly:
// nothing is recovered or written, so a damaged store or one a crashed
// writer left is an error) and closed again. It proves nothing about the
// log: a reader that trusts a key states it.
func (d Dir) VerifierKey() (*formats.LogKey, error) {
	l, err := ledger.OpenReadOnly(d.AuthorityStore())
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return l.Key(), nil
}

// Unlock says how to unlock a ledger's checkpoint key for signing:
// Identities gives the age identities of a key file (DIR/checkpoint.key),
// and is called only for one (so that a passphrase is asked for only
// then); PIN is asked for the PIN of a token key (DIR/checkpoint.uri)
// whose URI has no pin-source (nil: no prompt).
type Unlock struct {
	Identities func() ([]age.Identity, error)
	PIN        func(uri string) ([]byte, error)
}

// OpenAuthorityKeyed opens the authority log of d for appending, with its
// checkpoint key unlocked as u says: the token key DIR/checkpoint.uri
// names (OpenAuthorityWith), or the key file DIR/checkpoint.key
// (OpenAuthority). A log on a distributed engine (EngineFile) appends
// only through it. Errors: keys.ErrKeyRef for a malformed DIR/checkpoint.uri;
// u.Identities' own error, as it is; those of OpenAuthorityWith
// (sign.ErrToken and kin, ErrWrongKey) and OpenAuthority.
func (d Dir) OpenAuthorityKeyed(u Unlock) (*ledger.Log, error) {
	ref, err := CheckpointKeyRef(string(d))
	if err != nil {
		return nil, err
	}
	if ref != "" {
		l, err := OpenAuthorityWith(string(d), sign.KeyOptions{PIN: u.PIN})
		return d.fence(l, err)
	}
	if u.Identities == nil {
		return nil, errors.New("checkpoint key: no identities to unlock it")
	}
	ids, err := u.Identities()
	if err != nil {
		return nil, err
	} else if len(ids) == 0 {
		return nil, errors.New("checkpoint key: no identities to unlock it")
	}
	return d.fence(OpenAuthority(string(d), ids))
}

// fence makes l append only through an engine when d says it is on one
// (Engine; an EngineFile that cannot be read too).
func (d Dir) fence(l *ledger.Log, err error) (*ledger.Log, error) {
	if err != nil {
		return nil, err
	}
	if on, err := d.Engine(); err != nil || on != "" {
		l.RequireSequencer(cmp.Or(on, fmt.Sprint(err)))
	}
	return l, nil
}
