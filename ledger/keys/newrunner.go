package keys

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/writ-ledger/writ/sign"
)

// NewRunner makes the runner key of the ledger at dir as rp says
// (DIR/runner.key and DIR/runner.pub, or for a token key DIR/runner.uri
// and DIR/runner.pub) and states its protection (DIR/runner.protection),
// all or none. The protection is rp.Protection, or when that is zero
// ProtectPassphrase if rp.Recipients are given, else ProtectFile.
// ProtectFile takes no Recipients; ProtectToken takes rp.TokenKey and no
// Recipients. Errors: ErrProtection for params that do not fit the
// protection, and those of the sign functions that make or load the key
// (ErrKeyRef, for a token URI naming a module-path).
func NewRunner(dir string, rp RunnerParams) (*sign.PrivateKey, error) {
	p := rp.Protection
	if p == 0 {
		p = ProtectFile
		if len(rp.Recipients) > 0 {
			p = ProtectPassphrase
		}
	}
	prefix := filepath.Join(dir, Runner)
	var key *sign.PrivateKey
	var err error
	switch p {
	case ProtectFile:
		if len(rp.Recipients) > 0 {
			return nil, fmt.Errorf("%w: a key kept as %s is not encrypted to recipients", ErrProtection, p)
		}
		key, err = sign.GeneratePlainKeyFiles(prefix, rp.Rand)
	case ProtectPassphrase:
		key, err = sign.GenerateKeyFiles(prefix, rp.Recipients, rp.Rand)
	case ProtectToken:
		if len(rp.Recipients) > 0 || !sign.IsTokenURI(rp.TokenKey) {
			return nil, fmt.Errorf("%w: a key kept as %s takes the key's pkcs11: URI (KeyParams.TokenKey) and no recipients", ErrProtection, p)
		}
		if key, err = sign.LoadKey(rp.TokenKey, sign.KeyOptions{PIN: rp.PIN}); err == nil {
			err = WriteRef(dir, Runner, rp.TokenKey, key)
		}
	default:
		return nil, fmt.Errorf("%w: %s is none of %s", ErrProtection, p, strings.Join(ProtectionNames(), ", "))
	}
	if err != nil {
		return nil, err
	}
	if err := writeStatement(filepath.Join(dir, StatementFile), []byte(p.String()+"\n")); err != nil {
		os.Remove(prefix + ".key")
		os.Remove(prefix + ".pub")
		return nil, err
	}
	return key, nil
}

// LoadRunner loads the existing runner key of the ledger at dir as its
// statement says (RunnerProtection). rp.Protection, when not zero, must
// be the stated protection; a key kept as ProtectFile or ProtectToken
// takes no Identities (a token key takes rp.PIN). Errors: ErrProtection,
// os.ErrNotExist (wrapped) when there is no runner key, and those of the
// sign functions that load the key or of LoadToken.
func LoadRunner(dir string, rp RunnerParams) (*sign.PrivateKey, error) {
	p, ok, err := RunnerProtection(dir)
	if err != nil {
		return nil, err
	}
	keyPath := filepath.Join(dir, Runner+".key")
	if !ok {
		return nil, fmt.Errorf("%s: %w", keyPath, os.ErrNotExist)
	}
	if rp.Protection != 0 && rp.Protection != p {
		return nil, fmt.Errorf("%w: the runner key is kept as %s (%s), not %s: the protection is chosen at the runner's first admission and fixed after", ErrProtection, p, filepath.Join(dir, StatementFile), rp.Protection)
	}
	switch p {
	case ProtectFile:
		if len(rp.Identities) > 0 {
			return nil, fmt.Errorf("%w: the runner key is kept as %s (%s): it is not encrypted, and takes no identity or passphrase", ErrProtection, p, filepath.Join(dir, StatementFile))
		}
		return sign.LoadPlainKey(keyPath)
	case ProtectPassphrase:
		return sign.LoadPrivateKey(keyPath, rp.Identities...)
	case ProtectToken:
		if len(rp.Identities) > 0 {
			return nil, fmt.Errorf("%w: the runner key is kept as %s: it takes the token's PIN, no identity or passphrase", ErrProtection, p)
		}
		return LoadToken(dir, Runner, sign.KeyOptions{PIN: rp.PIN})
	}
	return nil, fmt.Errorf("%w: %s", ErrProtection, p)
}

// RemoveRunner removes the runner key's files (DIR/runner.key, .pub,
// .uri and the statement): what a failed first admission made.
func RemoveRunner(dir string) {
	for _, name := range []string{Runner + ".key", Runner + ".pub", Runner + ".uri", StatementFile} {
		os.Remove(filepath.Join(dir, name))
	}
}

// writeStatement creates path (mode 0644) with data, failing if it
// exists, and syncs it.
func writeStatement(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
