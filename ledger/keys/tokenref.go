package keys

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/sign"
)

// maxRef bounds a stored key URI file, in bytes: the URI and its newline.
const maxRef = sign.MaxTokenURI + 1

// ErrKeyRef: a stored key URI file that is malformed, or a key URI given
// where writ needs a token URI.
var ErrKeyRef = errors.New("invalid key reference")

// ErrWrongKey: a key that is not the one the ledger holds: a token key
// other than the one DIR/NAME.pub names (LoadToken), or, as
// ledger.ErrWrongKey, a checkpoint key that does not match the log.
var ErrWrongKey = errors.New("checkpoint key does not match the log")

// ReadRef returns the PKCS#11 URI stored in the key URI file at path
// (DIR/NAME.uri), or "" when there is no such file. The file must be a
// regular file holding one pkcs11: URI line of at most
// sign.MaxTokenURI bytes, naming no module-path (see WriteRef). Errors
// wrap ErrKeyRef, or are the os error of an Lstat that fails otherwise
// than with os.ErrNotExist.
func ReadRef(path string) (string, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a regular file (%s)", ErrKeyRef, path, fi.Mode().Type())
	}
	b, err := tiles.ReadFile(path, maxRef)
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

// WriteRef stores a token key's URI ref and public key k beside the
// ledger at dir, each file created exclusively (mode 0644): DIR/NAME.uri
// (the URI and a newline) and DIR/NAME.pub. A URI that names a
// module-path, or does not parse, is refused (ErrKeyRef) before anything
// is written; an existing file is the os error (os.ErrExist).
func WriteRef(dir, name, ref string, k *sign.PrivateKey) error {
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

// LoadToken opens the token key DIR/NAME.uri names (its PIN from the
// URI's pin-source or o.PIN) and checks that it is the key DIR/NAME.pub
// holds. Errors: ErrKeyRef (the URI file missing or malformed), those of
// sign.LoadKey (sign.ErrToken and the like) and sign.LoadPublicKey, and
// ErrWrongKey for a token key that is not the stored public key.
func LoadToken(dir, name string, o sign.KeyOptions) (*sign.PrivateKey, error) {
	ref, err := ReadRef(filepath.Join(dir, name+".uri"))
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
