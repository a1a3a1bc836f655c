package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/sign"
)

// RunnerProtectionFile names, inside a ledger directory, the statement of
// how the runner keeps its key: one line, a KeyProtection's name and a
// newline ("file\n"), mode 0644, written once with the runner key at the
// runner's first admission and never changed.
const RunnerProtectionFile = RunnerKey + ".protection"

// maxProtectionFile is the largest statement read, in bytes.
const maxProtectionFile = 64

// ErrRunnerKeyProtection is wrapped by every error about how the runner
// key is kept: a statement (DIR/runner.protection) that is malformed or
// missing beside an unencrypted key, a KeyParams.Protection other than the
// stated one, or KeyParams that do not fit the protection.
var ErrRunnerKeyProtection = errors.New("runner key protection")

// KeyProtection says how a runner keeps the private key that signs its
// decision log (DIR/runner.key). It is chosen when the key is made, at
// the runner's first admission, stated in DIR/runner.protection
// (RunnerProtectionFile), and fixed after. Its String form is its name in
// that file and on the command line. The zero value is no choice.
type KeyProtection uint8

// The protections. LIMITATIONS.md says which threat each meets.
const (
	// ProtectFile: DIR/runner.key is the key's PKCS #8 PEM, unencrypted,
	// created with mode 0600 and loaded only when it is owned by the
	// user id the runner runs as and closed to group and others
	// (sign.GeneratePlainKeyFiles, sign.LoadPlainKey). It signs with no
	// secret to give and no work to do; whoever can read the runner
	// account's files has the key.
	ProtectFile KeyProtection = iota + 1
	// ProtectPassphrase: DIR/runner.key is an age-encrypted key file
	// (sign.GenerateKeyFiles, sign.LoadPrivateKey), encrypted to a
	// passphrase (scrypt, with the work factor paid at every opening of
	// the decision log) or to age X25519 recipients. A runner whose key
	// was made before writ stated the protection is kept this way.
	ProtectPassphrase
	// ProtectToken: the key is made beforehand inside a PKCS#11 token
	// (`writ key generate --out pkcs11:...`) and never leaves it; the
	// ledger holds its URI (DIR/runner.uri, never a PIN) and public key
	// (DIR/runner.pub), and no DIR/runner.key. Whoever has the runner
	// account can sign while the token is present, but cannot copy the
	// key.
	ProtectToken
)

// DefaultRunnerProtection is how a new runner keeps its key when nothing
// else is chosen.
const DefaultRunnerProtection = ProtectFile

var protectionNames = map[KeyProtection]string{ProtectFile: "file", ProtectPassphrase: "passphrase", ProtectToken: "pkcs11"}

// String returns the protection's name ("file", "passphrase", "pkcs11"); "none"
// for the zero value, and KeyProtection(N) for a value that is no
// protection.
func (p KeyProtection) String() string {
	if name, ok := protectionNames[p]; ok {
		return name
	}
	if p == 0 {
		return "none"
	}
	return fmt.Sprintf("KeyProtection(%d)", uint8(p))
}

// KeyProtectionNames lists the protections' names, in order.
func KeyProtectionNames() []string {
	names := make([]string, 0, len(protectionNames))
	for p := KeyProtection(1); int(p) <= len(protectionNames); p++ {
		names = append(names, p.String())
	}
	return names
}

// ParseKeyProtection returns the protection named s, exactly as String
// spells it. Errors wrap ErrRunnerKeyProtection and list the names.
func ParseKeyProtection(s string) (KeyProtection, error) {
	for p, name := range protectionNames {
		if s == name {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w: %q is none of %s", ErrRunnerKeyProtection, s, strings.Join(KeyProtectionNames(), ", "))
}

// RunnerKeyProtection returns how the runner of the ledger at dir keeps
// its key, as DIR/runner.protection states it, with ok true; ok is false
// (and err nil) when the ledger has no runner key (DIR/runner.key) yet.
// A runner key without a statement was made before writ wrote one and is
// ProtectPassphrase, unless DIR/runner.key begins as an unencrypted PEM
// key: then the statement was lost, and that is an error (restore it with
// the key). A statement must be a protection's name and one newline,
// nothing more (at most 64 bytes); errors name the file and wrap
// ErrRunnerKeyProtection, or the os error when it cannot be read.
func RunnerKeyProtection(dir string) (p KeyProtection, ok bool, err error) {
	keyPath := filepath.Join(dir, RunnerKey+".key")
	if !RunnerKeyExists(dir) {
		return 0, false, nil
	}
	path := filepath.Join(dir, RunnerProtectionFile)
	data, err := readSmall(path, maxProtectionFile)
	if errors.Is(err, os.ErrNotExist) {
		if _, uerr := os.Lstat(filepath.Join(dir, RunnerKey+".uri")); uerr == nil {
			return 0, false, fmt.Errorf("%w: %s is missing beside the token key's URI (%s.uri): restore %s (it holds \"%s\")", ErrRunnerKeyProtection, path, RunnerKey, RunnerProtectionFile, ProtectToken)
		}
		if plainPEM(keyPath) {
			return 0, false, fmt.Errorf("%w: %s is missing and %s is an unencrypted key: restore %s (it holds \"%s\") with the key, or make a new runner", ErrRunnerKeyProtection, path, keyPath, RunnerProtectionFile, ProtectFile)
		}
		return ProtectPassphrase, true, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("%w: %w", ErrRunnerKeyProtection, err)
	}
	name, ok := strings.CutSuffix(string(data), "\n")
	if p, err = ParseKeyProtection(name); !ok || strings.ContainsAny(name, "\n\r") || err != nil {
		return 0, false, fmt.Errorf("%w: %s: want one line naming %s", ErrRunnerKeyProtection, path, strings.Join(KeyProtectionNames(), " or "))
	}
	return p, true, nil
}

// readSmall reads a whole regular file of at most limit bytes
// (tiles.ReadFile: a FIFO or device is refused, never waited on). A
// missing file wraps os.ErrNotExist.
func readSmall(path string, limit int64) ([]byte, error) {
	return tiles.ReadFile(path, limit)
}

// plainPEM reports whether the file at path begins as an unencrypted PEM
// private key (a file that cannot be read does not).
func plainPEM(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	return bytes.HasPrefix(bytes.TrimLeft(head[:n], " \t\r\n"), []byte("-----BEGIN PRIVATE KEY-----"))
}

// newRunnerKey makes the runner key of the ledger at dir as kp says
// (DIR/runner.key, DIR/runner.pub) and states its protection
// (DIR/runner.protection), all three or none. The protection is
// kp.Protection, or when that is zero ProtectPassphrase if kp.Recipients
// are given, else ProtectFile. ProtectFile takes no Recipients.
func newRunnerKey(dir string, kp KeyParams) (*sign.PrivateKey, error) {
	p := kp.Protection
	if p == 0 {
		p = ProtectFile
		if len(kp.Recipients) > 0 {
			p = ProtectPassphrase
		}
	}
	prefix := filepath.Join(dir, RunnerKey)
	var key *sign.PrivateKey
	var err error
	switch p {
	case ProtectFile:
		if len(kp.Recipients) > 0 {
			return nil, fmt.Errorf("%w: a key kept as %s is not encrypted to recipients", ErrRunnerKeyProtection, p)
		}
		key, err = sign.GeneratePlainKeyFiles(prefix, kp.Rand)
	case ProtectPassphrase:
		key, err = sign.GenerateKeyFiles(prefix, kp.Recipients, kp.Rand)
	case ProtectToken:
		if len(kp.Recipients) > 0 || !sign.IsTokenURI(kp.TokenKey) {
			return nil, fmt.Errorf("%w: a key kept as %s takes the key's pkcs11: URI (KeyParams.TokenKey) and no recipients", ErrRunnerKeyProtection, p)
		}
		if key, err = sign.LoadKey(kp.TokenKey, sign.KeyOptions{PIN: kp.PIN}); err == nil {
			err = writeKeyRef(dir, RunnerKey, kp.TokenKey, key)
		}
	default:
		return nil, fmt.Errorf("%w: %s is none of %s", ErrRunnerKeyProtection, p, strings.Join(KeyProtectionNames(), ", "))
	}
	if err != nil {
		return nil, err
	}
	if err := writeStatement(filepath.Join(dir, RunnerProtectionFile), []byte(p.String()+"\n")); err != nil {
		os.Remove(prefix + ".key")
		os.Remove(prefix + ".pub")
		return nil, err
	}
	return key, nil
}

// loadRunnerKey loads the existing runner key of the ledger at dir as its
// statement says (RunnerKeyProtection). kp.Protection, when not zero,
// must be the stated protection; a key kept as ProtectFile takes no
// Identities.
func loadRunnerKey(dir string, kp KeyParams) (*sign.PrivateKey, error) {
	p, ok, err := RunnerKeyProtection(dir)
	if err != nil {
		return nil, err
	}
	keyPath := filepath.Join(dir, RunnerKey+".key")
	if !ok {
		return nil, fmt.Errorf("%s: %w", keyPath, os.ErrNotExist)
	}
	if kp.Protection != 0 && kp.Protection != p {
		return nil, fmt.Errorf("%w: the runner key is kept as %s (%s), not %s: the protection is chosen at the runner's first admission and fixed after", ErrRunnerKeyProtection, p, filepath.Join(dir, RunnerProtectionFile), kp.Protection)
	}
	switch p {
	case ProtectFile:
		if len(kp.Identities) > 0 {
			return nil, fmt.Errorf("%w: the runner key is kept as %s (%s): it is not encrypted, and takes no identity or passphrase", ErrRunnerKeyProtection, p, filepath.Join(dir, RunnerProtectionFile))
		}
		return sign.LoadPlainKey(keyPath)
	case ProtectPassphrase:
		return sign.LoadPrivateKey(keyPath, kp.Identities...)
	case ProtectToken:
		if len(kp.Identities) > 0 {
			return nil, fmt.Errorf("%w: the runner key is kept as %s: it takes the token's PIN, no identity or passphrase", ErrRunnerKeyProtection, p)
		}
		return loadTokenKey(dir, RunnerKey, sign.KeyOptions{PIN: kp.PIN})
	}
	return nil, fmt.Errorf("%w: %s", ErrRunnerKeyProtection, p)
}

// removeRunnerKey removes the runner key's files: what a failed first
// admission made.
func removeRunnerKey(dir string) {
	for _, name := range []string{RunnerKey + ".key", RunnerKey + ".pub", RunnerKey + ".uri", RunnerProtectionFile} {
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
