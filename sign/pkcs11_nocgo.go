//go:build !cgo

package sign

import "fmt"

// TokensSupported reports whether this build can use keys in a PKCS#11
// token: false, since it was built without cgo, which loading a module
// needs.
const TokensSupported = false

// errNoCgo explains why a writ built without cgo has no token keys.
const errNoCgo = "this writ was built without cgo (CGO_ENABLED=0, or no C compiler was found), so it cannot load a PKCS#11 module; rebuild it with a C compiler (gcc) installed to use keys in a token"

// loadTokenKey refuses: loading a PKCS#11 module needs cgo. The error
// wraps ErrTokenModule.
func loadTokenKey(u *TokenURI, _ KeyOptions) (*PrivateKey, error) {
	return nil, fmt.Errorf("%s: %w: %s", u, ErrTokenModule, errNoCgo)
}

// generateTokenKey refuses: loading a PKCS#11 module needs cgo. The
// error wraps ErrTokenModule.
func generateTokenKey(u *TokenURI, _ KeyOptions) (*PrivateKey, error) {
	return nil, fmt.Errorf("%s: %w: %s", u, ErrTokenModule, errNoCgo)
}
