package ledgerdir

import (
	"fmt"
	"path/filepath"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/keys"
	"github.com/writ-ledger/writ/sign"
)

// A ledger's checkpoint key may live in a PKCS#11 token instead of an
// age-encrypted file: the directory then holds DIR/checkpoint.uri, the
// key's RFC 7512 URI (never a PIN: sign refuses pin-value), and
// DIR/checkpoint.pub, its public key, and no checkpoint.key.

// CheckpointKeyRef returns the PKCS#11 URI of the ledger's checkpoint key
// when it lives in a token (DIR/checkpoint.uri), or "" for a key file.
// Errors wrap keys.ErrKeyRef for a file that is not one URI line.
func CheckpointKeyRef(dir string) (string, error) {
	return keys.ReadRef(filepath.Join(dir, CheckpointKey+".uri"))
}

// OpenAuthorityWith opens the authority log of the ledger at dir for
// appending, with its checkpoint key unlocked by o: the token key named
// by DIR/checkpoint.uri (its PIN from the URI's pin-source or o.PIN), or
// the key file DIR/checkpoint.key (o.Identities). A token key must be the
// one DIR/checkpoint.pub names. Errors: those of sign.LoadKey (sign.ErrToken
// and the like), keys.ErrKeyRef, ErrWrongKey for a token key that is not the
// ledger's, and those of OpenWaiting.
func OpenAuthorityWith(dir string, o sign.KeyOptions) (*ledger.Log, error) {
	ref, err := CheckpointKeyRef(dir)
	if err != nil {
		return nil, err
	}
	if ref == "" {
		return OpenAuthority(dir, o.Identities)
	}
	key, err := keys.LoadToken(dir, CheckpointKey, o)
	if err != nil {
		return nil, fmt.Errorf("checkpoint key: %w", err)
	}
	return OpenWaiting(filepath.Join(dir, AuthorityDir), key, WriterLockWait)
}

// InitWithKey is Init with a checkpoint key that already exists in a
// token (ref, its pkcs11: URI, with key the signer it opened): Dir.Init
// with NewKey{TokenURI: ref, Token: key} and no first step. The ledger
// stores the URI and the public key (DIR/checkpoint.uri,
// DIR/checkpoint.pub), never a key file; a URI naming a module-path is
// refused (keys.ErrKeyRef): the module of a stored key comes from
// $WRIT_PKCS11_MODULE. Errors: those of Init and keys.ErrKeyRef.
func InitWithKey(dir, origin, ref string, key *sign.PrivateKey) (*ledger.Log, error) {
	return Dir(dir).Init(origin, NewKey{TokenURI: ref, Token: key}, nil)
}
