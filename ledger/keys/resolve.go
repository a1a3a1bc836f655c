package keys

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/writ-ledger/writ/sign"
)

// The refusals of Resolve, each of what an operator asked against what
// the ledger holds; a command line maps each to its flags, as bad usage.
var (
	// ErrProtectionName: a protection asked by a name that is none (the
	// error also wraps ParseProtection's, and so ErrProtection).
	ErrProtectionName = errors.New("no such runner key protection")
	// ErrNotTokenURI: Choice.TokenKey is not a PKCS#11 URI.
	ErrNotTokenURI = errors.New("a token key is given by its pkcs11: URI")
	// ErrTokenKeyProtection: a token key given with a protection other
	// than ProtectToken asked.
	ErrTokenKeyProtection = errors.New("a token key is kept as pkcs11")
	// ErrTokenKeyExists: a token key given for a runner whose key is
	// already made (it is read at the first admission only).
	ErrTokenKeyExists = errors.New("the runner key is already made")
	// ErrNoTokenKey: ProtectToken asked for a new runner without the
	// token key's URI.
	ErrNoTokenKey = errors.New("a new runner key kept as pkcs11 needs the token key's URI")
	// ErrProtectionFixed: a protection asked other than the one the
	// existing runner key is stated to have.
	ErrProtectionFixed = errors.New("the runner key's protection is fixed at its first admission")
	// ErrSecretUnused: a secret (a passphrase, an identity, a recipient)
	// given for a runner key that is not age-encrypted (ProtectFile,
	// ProtectToken): whoever gives one believes the key is encrypted.
	ErrSecretUnused = errors.New("the runner key takes no passphrase or identity")
)

// Choice is what an operator asked about the runner key, each field zero
// when not asked.
type Choice struct {
	// Protection names the protection asked for, as ParseProtection reads
	// it, when ProtectionGiven (an empty name given is refused).
	Protection      string
	ProtectionGiven bool
	// TokenKey is a token key's pkcs11: URI, for a new runner ("" none).
	TokenKey string
	// Secret names a secret given for an age-encrypted key (a passphrase
	// file, an identity, a recipient: the caller's name for it), ""
	// when none is.
	Secret string
}

// Resolved is how the runner key of a ledger will be made or unlocked.
type Resolved struct {
	// Protection is how the key is kept: the stated one for an existing
	// key, else the one asked (ProtectToken with a TokenKey), else
	// DefaultProtection.
	Protection Protection
	// Asked is the protection asked for (0: none).
	Asked Protection
	// Exists is true when the runner key exists (it is loaded, not made);
	// Stated is then its stated protection.
	Exists bool
	Stated Protection
	// TokenKey is Choice.TokenKey, for a new runner kept as ProtectToken.
	TokenKey string
	// Statement is the path of the statement, DIR/runner.protection.
	Statement string
}

// Resolve decides how the runner key of the ledger at dir will be made or
// unlocked, given what was asked (c), in this order: the statement is read
// (RunnerProtection's errors, wrapping ErrProtection or an os error); the
// protection asked must be a name (ParseProtection's error, wrapped in
// ErrProtectionName); a token key must be a pkcs11: URI (ErrNotTokenURI),
// go with ProtectToken (ErrTokenKeyProtection) and a runner not yet made
// (ErrTokenKeyExists); ProtectToken for a new runner takes a token key
// (ErrNoTokenKey); an existing key keeps its stated protection
// (ErrProtectionFixed); and a key kept as file or in a token takes no
// secret (ErrSecretUnused). With an error, the Resolved holds what was
// decided before it (Exists, Stated, Asked, Statement).
func Resolve(dir string, c Choice) (Resolved, error) {
	r := Resolved{Statement: filepath.Join(dir, StatementFile)}
	var err error
	if r.Stated, r.Exists, err = RunnerProtection(dir); err != nil {
		return r, err
	}
	if c.ProtectionGiven {
		if r.Asked, err = ParseProtection(c.Protection); err != nil {
			return r, fmt.Errorf("%w: %w", ErrProtectionName, err)
		}
	}
	if c.TokenKey != "" {
		switch {
		case !sign.IsTokenURI(c.TokenKey):
			return r, ErrNotTokenURI
		case r.Asked != 0 && r.Asked != ProtectToken:
			return r, ErrTokenKeyProtection
		case r.Exists:
			return r, ErrTokenKeyExists
		}
		r.Asked, r.TokenKey = ProtectToken, c.TokenKey
	} else if r.Asked == ProtectToken && !r.Exists {
		return r, ErrNoTokenKey
	}
	r.Protection = DefaultProtection
	switch {
	case r.Exists && r.Asked != 0 && r.Asked != r.Stated:
		return r, ErrProtectionFixed
	case r.Exists:
		r.Protection = r.Stated
	case r.Asked != 0:
		r.Protection = r.Asked
	}
	if c.Secret != "" && (r.Protection == ProtectFile || r.Protection == ProtectToken) {
		return r, ErrSecretUnused
	}
	return r, nil
}
