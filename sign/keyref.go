package sign

import (
	"bytes"
	"errors"
	"fmt"

	"filippo.io/age"
)

// TokenModuleEnv names the environment variable that gives the PKCS#11
// module (an absolute path to a shared library) for a token URI without
// module-path.
const TokenModuleEnv = "WRIT_PKCS11_MODULE"

// MaxTokenPIN is the longest PIN accepted, in bytes (from a pin-source
// file after its trailing newline, or from KeyOptions.PIN).
const MaxTokenPIN = 255

// MaxTokenMessage is the longest message a token key signs, in bytes: a
// token signs in one C_Sign call, so the whole message is in memory. writ
// signs COSE structures of records (at most 65,535 bytes each), signed
// notes and cosignatures, all far smaller.
const MaxTokenMessage = 1 << 20

// Errors for keys in a PKCS#11 token. ErrToken is wrapped by every token
// failure (ErrTokenURI and the four below included); an error also names
// the URI, without any PIN, except for ErrTokenURI, which never repeats
// the URI it refuses.
var (
	// ErrToken: a key in a PKCS#11 token could not be used or made.
	ErrToken = errors.New("PKCS#11")
	// ErrTokenModule: the PKCS#11 module cannot be loaded or initialized:
	// no module-path nor $WRIT_PKCS11_MODULE, a path that is not a
	// loadable PKCS#11 library, or a writ built without cgo.
	ErrTokenModule = fmt.Errorf("%w: the module cannot be loaded", ErrToken)
	// ErrTokenNotFound: the module has no token with the URI's label.
	ErrTokenNotFound = fmt.Errorf("%w: no token with that label", ErrToken)
	// ErrTokenPIN: the token refused the login: wrong PIN, or the PIN is
	// locked.
	ErrTokenPIN = fmt.Errorf("%w: login failed (wrong PIN)", ErrToken)
	// ErrTokenObject: the token has no Ed25519 key pair with the URI's
	// object label and id.
	ErrTokenObject = fmt.Errorf("%w: no such key object", ErrToken)
	// ErrTokenURI: a reference starting "pkcs11:" is not a URI writ
	// accepts (see ParseTokenURI).
	ErrTokenURI = fmt.Errorf("%w: invalid URI", ErrToken)
)

// KeyOptions says how to unlock a private key reference.
type KeyOptions struct {
	Identities []age.Identity                   // for age-encrypted key files
	PIN        func(uri string) ([]byte, error) // asked when a token URI has no pin-source; nil: no prompt
}

// LoadKey loads the private key ref names: a key in a PKCS#11 token when
// ref is a PKCS#11 URI (IsTokenURI), else a key file, as LoadPrivateKey
// with o.Identities.
//
// A token key is found in the token whose label is the URI's token, by
// its private key object: class CKO_PRIVATE_KEY, key type
// CKK_EC_EDWARDS, and the URI's object (CKA_LABEL) and id (CKA_ID),
// whichever are given; exactly one must match. Its public key is the one
// public key object of the same type with the private key's CKA_ID (and
// the URI's label, if given); its CKA_EC_POINT is the 32-byte Ed25519
// key, DER OCTET STRING or raw. The module is the URI's module-path,
// else $WRIT_PKCS11_MODULE; it is loaded and initialized once per process
// and never finalized. The user PIN is read from the pin-source file
// (see ParseTokenURI; mode 0600 or stricter, one trailing newline
// dropped), else asked with o.PIN; it is not asked when the token needs
// no login or this process is already logged in to it (PKCS#11 login
// is per application and token). The key keeps one session open,
// closed when the key is garbage; it signs with CKM_EDDSA over the whole
// message (at most MaxTokenMessage bytes), one signature at a time, and
// checks each signature against the public key before returning it.
//
// Errors for a token key wrap ErrToken and, where they apply,
// ErrTokenModule, ErrTokenNotFound, ErrTokenPIN, ErrTokenObject or
// ErrTokenURI; a public key object that is not an acceptable Ed25519 key
// also wraps ErrInvalidKey.
func LoadKey(ref string, o KeyOptions) (*PrivateKey, error) {
	if !IsTokenURI(ref) {
		return LoadPrivateKey(ref, o.Identities...)
	}
	u, err := ParseTokenURI(ref)
	if err != nil {
		return nil, err
	}
	return loadTokenKey(u, o)
}

// GenerateTokenKey makes a new Ed25519 key pair inside the token the URI
// names (CKM_EC_EDWARDS_KEY_PAIR_GEN), both objects on the token
// (CKA_TOKEN) with CKA_LABEL the URI's object (required) and CKA_ID the
// URI's id, else 16 random bytes from the token. The private key is
// CKA_PRIVATE, CKA_SENSITIVE, not CKA_EXTRACTABLE and may only sign; a
// token that does not keep it so has both objects destroyed and the
// call fails. It refuses, wrapping ErrExists and creating nothing, when
// an object with that label (or that id) is already in the token. The
// module and PIN are found as for LoadKey. Errors wrap ErrToken as
// LoadKey's do.
func GenerateTokenKey(uri string, o KeyOptions) (*PrivateKey, error) {
	u, err := ParseTokenURI(uri)
	if err != nil {
		return nil, err
	}
	if u.Object == "" {
		return nil, fmt.Errorf("%s: %w: a new key needs a label: give object=LABEL", u, ErrTokenURI)
	}
	return generateTokenKey(u, o)
}

// tokenPIN returns the user PIN for u: the pin-source file's content
// without one trailing newline, else what o.PIN answers. The caller
// clears it after use.
func tokenPIN(u *TokenURI, o KeyOptions) ([]byte, error) {
	var pin []byte
	switch {
	case u.PINSource != "":
		data, err := readPrivateFile(u.PINSource)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: pin-source: %w", u, ErrToken, err)
		}
		pin = bytes.TrimSuffix(data, []byte("\n"))
		pin = bytes.TrimSuffix(pin, []byte("\r"))
		if bytes.ContainsAny(pin, "\r\n\x00") {
			clear(data)
			return nil, fmt.Errorf("%s: %w: pin-source %s holds more than one line (or a NUL byte); it must hold only the PIN", u, ErrToken, u.PINSource)
		}
	case o.PIN != nil:
		p, err := o.PIN(u.String())
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %w", u, ErrToken, err)
		}
		pin = p
	default:
		return nil, fmt.Errorf("%s: %w: no PIN: the URI has no pin-source and none can be asked for", u, ErrToken)
	}
	if len(pin) == 0 || len(pin) > MaxTokenPIN {
		clear(pin)
		return nil, fmt.Errorf("%s: %w: the PIN must be 1 to %d bytes", u, ErrToken, MaxTokenPIN)
	}
	return pin, nil
}
