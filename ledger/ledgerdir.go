package ledger

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"filippo.io/age"
	"github.com/writ-ledger/writ/ledger/formats"
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
// DIR/checkpoint.pub). A URI naming a module-path is refused (ErrKeyRef):
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
// (sign.ErrExists and kin, ErrKeyRef) and the log.
func (d Dir) Init(origin string, key NewKey, first func(*Log) error) (*Log, error) {
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
func (d Dir) create(origin string, key NewKey) (*Log, error) {
	k := key.Token
	if k == nil {
		var err error
		if k, err = sign.GenerateKeyFiles(filepath.Join(string(d), CheckpointKey), key.Recipients, key.Rand); err != nil {
			return nil, err
		}
	} else if err := writeKeyRef(string(d), CheckpointKey, key.TokenURI, k); err != nil {
		return nil, err
	}
	return CreateWithHistory(d.AuthorityStore(), origin, k, nil)
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
