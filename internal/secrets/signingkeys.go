package secrets

import (
	"slices"

	"github.com/writ-ledger/writ/internal/exitcode"
	"github.com/writ-ledger/writ/sign"
)

// KeyError is a signing key that did not load (sign.LoadKey's error,
// Err): its message is Err's, so a caller can add the hints of its kind
// (a PKCS#11 token's failures) without changing the text.
type KeyError struct {
	Ref string // the key's reference: a file path or a pkcs11: URI
	Err error
}

func (e *KeyError) Error() string { return e.Err.Error() }
func (e *KeyError) Unwrap() error { return e.Err }

// SigningKeys loads each of refs (the --key values), in order: a private
// key file, all of them unlocked with the one passphrase or the
// identities of Identities, asked only if a file is among them; or a key
// in a PKCS#11 token (a pkcs11: URI), its PIN read from the URI's
// pin-source, else asked on the terminal (TokenPIN). No refs is bad usage
// ("--key is required"); the errors of Identities are returned as they
// are; a key that does not load is a *KeyError.
func (s *Source) SigningKeys(refs []string) ([]*sign.PrivateKey, error) {
	if len(refs) == 0 {
		return nil, exitcode.Usagef("--key is required")
	}
	o := sign.KeyOptions{PIN: s.TokenPIN()}
	if slices.ContainsFunc(refs, func(r string) bool { return !sign.IsTokenURI(r) }) {
		ids, err := s.Identities("the signing key")
		if err != nil {
			return nil, err
		}
		o.Identities = ids
	}
	var keys []*sign.PrivateKey
	for _, r := range refs {
		k, err := sign.LoadKey(r, o)
		if err != nil {
			return nil, &KeyError{Ref: r, Err: err}
		}
		keys = append(keys, k)
	}
	return keys, nil
}
