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

// maxKeyRef bounds a stored key URI, in bytes.
const maxKeyRef = 4096

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
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	ref := strings.TrimSuffix(string(b), "\n")
	if len(b) > maxKeyRef || !sign.IsTokenURI(ref) || strings.ContainsAny(ref, "\n\r") {
		return "", fmt.Errorf("%w: %s is not one pkcs11: URI line", ErrKeyRef, path)
	}
	return ref, nil
}

// writeKeyRef stores a token key's URI and public key beside the ledger,
// created exclusively: DIR/NAME.uri and DIR/NAME.pub.
func writeKeyRef(dir, name, ref string, k *sign.PrivateKey) error {
	if !sign.IsTokenURI(ref) || len(ref) > maxKeyRef || strings.ContainsAny(ref, "\n\r") {
		return fmt.Errorf("%w: %q is not a pkcs11: URI", ErrKeyRef, ref)
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
// token (ref, its pkcs11: URI, with key the signer it opened): the ledger
// stores the URI and the public key (DIR/checkpoint.uri,
// DIR/checkpoint.pub), never a key file. Errors: those of Init and
// ErrKeyRef.
func InitWithKey(dir, origin, ref string, key *sign.PrivateKey) (*Log, error) {
	if err := prepareDir(dir, origin); err != nil {
		return nil, err
	}
	if err := writeKeyRef(dir, CheckpointKey, ref, key); err != nil {
		return nil, err
	}
	return CreateWithHistory(filepath.Join(dir, AuthorityDir), origin, key, nil)
}
