package failure

import (
	"errors"

	"github.com/writ-ledger/writ/sign"
)

// TokenHint returns the next act for an error loading or making a key in
// a PKCS#11 token: one for each of sign.ErrTokenURI, ErrTokenModule,
// ErrTokenNotFound, ErrTokenPIN, ErrTokenObject, and a token's key that
// exists (sign.ErrToken with sign.ErrExists); "" for any other error.
func TokenHint(err error) string {
	switch {
	case errors.Is(err, sign.ErrTokenURI):
		return "a key in a token is pkcs11:token=LABEL;object=LABEL (RFC 7512), with ?pin-source=FILE for a file holding the PIN, and &module-path=/abs/module.so unless $WRIT_PKCS11_MODULE gives the module"
	case errors.Is(err, sign.ErrTokenModule):
		return "give the token vendor's PKCS#11 library as an absolute path: module-path= in the URI's query, or $WRIT_PKCS11_MODULE (SoftHSM2 on Debian: /usr/lib/softhsm/libsofthsm2.so)"
	case errors.Is(err, sign.ErrTokenNotFound):
		return "token= is the token's label: list them with the token's tool (softhsm2-util --show-slots, pkcs11-tool --module MODULE --list-token-slots)"
	case errors.Is(err, sign.ErrTokenPIN):
		return "the pin-source file must hold the user PIN alone (one trailing newline at most); a token locks its PIN after a few wrong tries"
	case errors.Is(err, sign.ErrTokenObject):
		return "object= is the key's label: list the token's objects (pkcs11-tool --module MODULE --login --list-objects), or make one with writ key generate --out 'pkcs11:token=T;object=O' --pub FILE"
	case errors.Is(err, sign.ErrToken) && errors.Is(err, sign.ErrExists):
		return "choose another object= label: writ never replaces a key in a token"
	}
	return ""
}
