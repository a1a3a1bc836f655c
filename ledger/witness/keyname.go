package witness

import (
	"errors"

	"github.com/writ-ledger/writ/sign"
)

// ErrTokenName: a witness key in a token (a PKCS#11 URI) has no
// PREFIX.vkey beside it to name the witness, and no name was given.
var ErrTokenName = errors.New("a witness key in a token has no verifier key file: its name must be given")

// ResolveName returns the name of the witness whose key k was loaded from
// keyRef: for a key in a token (sign.IsTokenURI), given, which must not be
// "" (ErrTokenName); for a key file, KeyName's (the name in PREFIX.vkey,
// or given), with its errors.
func ResolveName(keyRef string, k *sign.PrivateKey, given string) (string, error) {
	if sign.IsTokenURI(keyRef) {
		if given == "" {
			return "", ErrTokenName
		}
		return given, nil
	}
	return KeyName(keyRef, k, given)
}
