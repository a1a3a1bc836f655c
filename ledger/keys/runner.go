package keys

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"filippo.io/age"
	"github.com/writ-ledger/writ/ledger/tiles"
)

// Runner names the runner key's files in a ledger directory: DIR/runner
// + ".key", ".pub", ".uri" (ledgerdir.RunnerKey is the same name).
const Runner = "runner"

// StatementFile names, inside a ledger directory, the statement of how
// the runner keeps its key: one line, a Protection's name and a newline
// ("file\n"), mode 0644, written once with the runner key at the runner's
// first admission and never changed.
const StatementFile = Runner + ".protection"

// maxStatement is the largest statement read, in bytes.
const maxStatement = 64

// ErrProtection is wrapped by every error about how the runner key is
// kept: a statement (DIR/runner.protection) that is malformed or missing
// beside an unencrypted key, a RunnerParams.Protection other than the
// stated one, or RunnerParams that do not fit the protection.
var ErrProtection = errors.New("runner key protection")

// Protection says how a runner keeps the private key that signs its
// decision log (DIR/runner.key). It is chosen when the key is made, at
// the runner's first admission, stated in DIR/runner.protection
// (StatementFile), and fixed after. Its String form is its name in that
// file and on the command line. The zero value is no choice.
type Protection uint8

// The protections. LIMITATIONS.md says which threat each meets.
const (
	// ProtectFile: DIR/runner.key is the key's PKCS #8 PEM, unencrypted,
	// created with mode 0600 and loaded only when it is owned by the
	// user id the runner runs as and closed to group and others
	// (sign.GeneratePlainKeyFiles, sign.LoadPlainKey). It signs with no
	// secret to give and no work to do; whoever can read the runner
	// account's files has the key.
	ProtectFile Protection = iota + 1
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

// DefaultProtection is how a new runner keeps its key when nothing else
// is chosen.
const DefaultProtection = ProtectFile

var protectionNames = map[Protection]string{ProtectFile: "file", ProtectPassphrase: "passphrase", ProtectToken: "pkcs11"}

// String returns the protection's name ("file", "passphrase", "pkcs11");
// "none" for the zero value, and Protection(N) for a value that is no
// protection.
func (p Protection) String() string {
	if name, ok := protectionNames[p]; ok {
		return name
	}
	if p == 0 {
		return "none"
	}
	return fmt.Sprintf("Protection(%d)", uint8(p))
}

// ProtectionNames lists the protections' names, in order.
func ProtectionNames() []string {
	names := make([]string, 0, len(protectionNames))
	for p := Protection(1); int(p) <= len(protectionNames); p++ {
		names = append(names, p.String())
	}
	return names
}

// ParseProtection returns the protection named s, exactly as String
// spells it. Errors wrap ErrProtection and list the names.
func ParseProtection(s string) (Protection, error) {
	for p, name := range protectionNames {
		if s == name {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w: %q is none of %s", ErrProtection, s, strings.Join(ProtectionNames(), ", "))
}

// RunnerExists reports whether the ledger at dir has a runner key (a key
// file DIR/runner.key, or a token key's URI DIR/runner.uri), that is,
// whether ledgerdir.OpenDecisions will unlock a key rather than make one.
func RunnerExists(dir string) bool {
	for _, ext := range []string{".key", ".uri"} {
		if _, err := os.Lstat(filepath.Join(dir, Runner+ext)); err == nil {
			return true
		}
	}
	return false
}

// RunnerProtection returns how the runner of the ledger at dir keeps its
// key, as DIR/runner.protection states it, with ok true; ok is false (and
// err nil) when the ledger has no runner key (RunnerExists) yet. A runner
// key without a statement was made before writ wrote one and is
// ProtectPassphrase, unless DIR/runner.key begins as an unencrypted PEM
// key: then the statement was lost, and that is an error (restore it with
// the key). A statement must be a protection's name and one newline,
// nothing more (at most 64 bytes); errors name the file and wrap
// ErrProtection, or the os error when it cannot be read.
func RunnerProtection(dir string) (p Protection, ok bool, err error) {
	keyPath := filepath.Join(dir, Runner+".key")
	if !RunnerExists(dir) {
		return 0, false, nil
	}
	path := filepath.Join(dir, StatementFile)
	data, err := tiles.ReadFile(path, maxStatement)
	if errors.Is(err, os.ErrNotExist) {
		if _, uerr := os.Lstat(filepath.Join(dir, Runner+".uri")); uerr == nil {
			return 0, false, fmt.Errorf("%w: %s is missing beside the token key's URI (%s.uri): restore %s (it holds \"%s\")", ErrProtection, path, Runner, StatementFile, ProtectToken)
		}
		if plainPEM(keyPath) {
			return 0, false, fmt.Errorf("%w: %s is missing and %s is an unencrypted key: restore %s (it holds \"%s\") with the key, or make a new runner", ErrProtection, path, keyPath, StatementFile, ProtectFile)
		}
		return ProtectPassphrase, true, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("%w: %w", ErrProtection, err)
	}
	name, ok := strings.CutSuffix(string(data), "\n")
	if p, err = ParseProtection(name); !ok || strings.ContainsAny(name, "\n\r") || err != nil {
		return 0, false, fmt.Errorf("%w: %s: want one line naming %s", ErrProtection, path, strings.Join(ProtectionNames(), " or "))
	}
	return p, true, nil
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

// RunnerParams says how the runner key is made (NewRunner) or unlocked
// (LoadRunner).
type RunnerParams struct {
	// Protection is how the key is kept; zero lets NewRunner infer it and
	// LoadRunner take the stated one.
	Protection Protection
	// Recipients are what a new ProtectPassphrase key is encrypted to
	// (sign.ScryptRecipient for a passphrase, or X25519 recipients);
	// Identities unlock an existing one.
	Recipients []age.Recipient
	Identities []age.Identity
	// Rand is the randomness for a new key file.
	Rand io.Reader
	// TokenKey is the pkcs11: URI of a key made in a token, for a new
	// runner under ProtectToken; PIN is asked for a token URI without
	// pin-source (nil: no prompt).
	TokenKey string
	PIN      func(uri string) ([]byte, error)
}
