package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/writ-ledger/writ/sign"
)

// A ledger's checkpoint key may live in a PKCS#11 token instead of an
// age-encrypted file: the directory then holds DIR/checkpoint.uri, the
// key's RFC 7512 URI (never a PIN: sign refuses pin-value), and
// DIR/checkpoint.pub, its public key, and no checkpoint.key.

// maxKeyRef bounds a stored key URI file, in bytes: the URI and its
// newline.
const maxKeyRef = sign.MaxTokenURI + 1

// ErrKeyRef: a stored key URI file that is malformed, or a key URI given
// where writ needs a token URI.
var ErrKeyRef = errors.New("invalid key reference")

// CheckpointKeyRef returns the PKCS#11 URI of the ledger's checkpoint key
// when it lives in a token (DIR/checkpoint.uri), or "" for a key file.
// Errors wrap ErrKeyRef for a file that is not one URI line.
func CheckpointKeyRef(dir string) (string, error) {
	return readKeyRef(filepath.Join(dir, CheckpointKey+".uri"))
}

func readKeyRef(path string) (string, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a regular file (%s)", ErrKeyRef, path, fi.Mode().Type())
	}
	b, err := readSmall(path, maxKeyRef)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrKeyRef, err)
	}
	ref := strings.TrimSuffix(string(b), "\n")
	if !sign.IsTokenURI(ref) || strings.ContainsAny(ref, "\n\r") {
		return "", fmt.Errorf("%w: %s is not one pkcs11: URI line", ErrKeyRef, path)
	}
	if err := storableRef(ref); err != nil {
		return "", fmt.Errorf("%w (in %s)", err, path)
	}
	return ref, nil
}

// storableRef refuses a key URI that writ would not keep in a ledger
// directory: one that does not parse, or that names a module. Whoever can
// edit the directory must not choose the code writ loads (and hands the
// PIN to); the module comes from $WRIT_PKCS11_MODULE, the operator's
// environment.
func storableRef(ref string) error {
	u, err := sign.ParseTokenURI(ref)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKeyRef, err)
	}
	if u.ModulePath != "" {
		return fmt.Errorf("%w: a key URI kept in a ledger directory names no module-path: give the module with $%s", ErrKeyRef, sign.TokenModuleEnv)
	}
	return nil
}

// writeKeyRef stores a token key's URI and public key beside the ledger,
// created exclusively: DIR/NAME.uri and DIR/NAME.pub.
func writeKeyRef(dir, name, ref string, k *sign.PrivateKey) error {
	if err := storableRef(ref); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{name + ".uri", []byte(ref + "\n")}, {name + ".pub", k.Public().PEM()}} {
		fd, err := os.OpenFile(filepath.Join(dir, f.name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		_, err = fd.Write(f.data)
		if cerr := fd.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// OpenAuthorityWith opens the authority log of the ledger at dir for
// appending, with its checkpoint key unlocked by o: the token key named
// by DIR/checkpoint.uri (its PIN from the URI's pin-source or o.PIN), or
// the key file DIR/checkpoint.key (o.Identities). A token key must be the
// one DIR/checkpoint.pub names. Errors: those of sign.LoadKey (sign.ErrToken
// and the like), ErrKeyRef, ErrWrongKey for a token key that is not the
// ledger's, and those of OpenWaiting.
func OpenAuthorityWith(dir string, o sign.KeyOptions) (*Log, error) {
	ref, err := CheckpointKeyRef(dir)
	if err != nil {
		return nil, err
	}
	if ref == "" {
		return OpenAuthority(dir, o.Identities)
	}
	key, err := loadTokenKey(dir, CheckpointKey, o)
	if err != nil {
		return nil, fmt.Errorf("checkpoint key: %w", err)
	}
	return OpenWaiting(filepath.Join(dir, AuthorityDir), key, WriterLockWait)
}

// loadTokenKey opens the token key DIR/NAME.uri names and checks that it
// is the key DIR/NAME.pub holds (ErrWrongKey otherwise).
func loadTokenKey(dir, name string, o sign.KeyOptions) (*sign.PrivateKey, error) {
	ref, err := readKeyRef(filepath.Join(dir, name+".uri"))
	if err != nil {
		return nil, err
	}
	if ref == "" {
		return nil, fmt.Errorf("%w: %s is missing", ErrKeyRef, filepath.Join(dir, name+".uri"))
	}
	key, err := sign.LoadKey(ref, o)
	if err != nil {
		return nil, err
	}
	pub, err := sign.LoadPublicKey(filepath.Join(dir, name+".pub"))
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(pub.Raw(), key.Public().Raw()) {
		return nil, fmt.Errorf("%w: the token key %s is %s, the ledger's %s key is %s", ErrWrongKey, ref, key.Public().ID(), name, pub.ID())
	}
	return key, nil
}

// InitWithKey is Init with a checkpoint key that already exists in a
// token (ref, its pkcs11: URI, with key the signer it opened): Dir.Init
// with NewKey{TokenURI: ref, Token: key} and no first step. Errors: those
// of Init and ErrKeyRef.
func InitWithKey(dir, origin, ref string, key *sign.PrivateKey) (*Log, error) {
	return Dir(dir).Init(origin, NewKey{TokenURI: ref, Token: key}, nil)
}
