package witness

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"filippo.io/age"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/sign"
)

// A witness's key files, as `writ witness key generate --out PREFIX`
// writes them: PREFIX.key (the age-encrypted Ed25519 key, sign's key
// file), PREFIX.pub (its PEM public key) and PREFIX.vkey, one line: the
// witness's cosigner verifier key (C2SP tlog-cosignature,
// <name>+<key id>+<base64>) and a newline. The name is part of the key
// id, so the .vkey file is where a witness's name is kept.

// MaxVKeyFile bounds a PREFIX.vkey file, in bytes.
const MaxVKeyFile = 4096

// Errors of the key files: ErrWitnessName for a name that is not a valid
// origin-like name; ErrVKeyFile for a PREFIX.vkey that does not parse or
// does not match its key or the name given; ErrNoName when there is no
// PREFIX.vkey and no name was given. Each is wrapped with the file or the
// value.
var (
	ErrWitnessName = errors.New("a witness name is 1 to 128 printable ASCII characters, no space or '+' (a schema-less URL such as witness.example/w1)")
	ErrVKeyFile    = errors.New("witness verifier key file")
	ErrNoName      = errors.New("no verifier key file beside the key, and no name given")
	// ErrNameMismatch: the name given is not the one PREFIX.vkey holds.
	ErrNameMismatch = errors.New("witness name")
)

// KeyFiles is what GenerateKeyFiles wrote. Its JSON field names are
// `writ witness key generate --json`'s result.
type KeyFiles struct {
	KeyID      string `json:"key_id" doc:"the public key's id, 64 hex"` // sign's key id of the Ed25519 public key
	Name       string `json:"name" doc:"the witness's name"`            // the witness's name
	PrivateKey string `json:"private_key" doc:"PREFIX.key, encrypted"`  // PREFIX.key
	PublicKey  string `json:"public_key" doc:"PREFIX.pub"`              // PREFIX.pub
	VKey       string `json:"vkey" doc:"the cosigner verifier key"`     // the cosigner verifier key
	VKeyFile   string `json:"vkey_file" doc:"PREFIX.vkey"`              // PREFIX.vkey
}

// GenerateKeyFiles makes a new witness key named name and writes
// PREFIX.key (encrypted to the recipients), PREFIX.pub and PREFIX.vkey.
// It writes nothing when name is not valid (ErrWitnessName) or when any
// of the three files exists (sign.ErrExists for the first two, an
// os.ErrExist error for PREFIX.vkey); other errors are sign's.
func GenerateKeyFiles(prefix, name string, to []age.Recipient, rand io.Reader) (*KeyFiles, error) {
	if err := CheckNewKeyFiles(prefix, name); err != nil {
		return nil, err
	}
	vkeyPath := prefix + ".vkey"
	k, err := sign.GenerateKeyFiles(prefix, to, rand)
	if err != nil {
		return nil, err
	}
	vkey, err := formats.CosignerKey(name, k.Public())
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(vkeyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(vkey + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return &KeyFiles{VKey: vkey, Name: name, KeyID: k.Public().ID(),
		PrivateKey: prefix + ".key", PublicKey: prefix + ".pub", VKeyFile: vkeyPath}, nil
}

// CheckNewKeyFiles is GenerateKeyFiles's check of name and of
// PREFIX.vkey, for a caller to run before it asks for a passphrase:
// ErrWitnessName, or an error wrapping os.ErrExist naming PREFIX.vkey.
func CheckNewKeyFiles(prefix, name string) error {
	if !formats.ValidOrigin(name) {
		return fmt.Errorf("%w: %q", ErrWitnessName, name)
	}
	if _, err := os.Lstat(prefix + ".vkey"); err == nil {
		return fmt.Errorf("%s.vkey: %w", prefix, os.ErrExist)
	}
	return nil
}

// KeyName returns the name of the witness whose key k was loaded from
// keyFile (PREFIX.key): the name in PREFIX.vkey, which must be k's
// verifier key and, when given is not "", name given; or, with no
// PREFIX.vkey, given (ErrNoName when it is ""). Errors wrap ErrVKeyFile,
// ErrNameMismatch or ErrNoName, or are the file's read error.
func KeyName(keyFile string, k *sign.PrivateKey, given string) (string, error) {
	path := strings.TrimSuffix(keyFile, ".key") + ".vkey"
	data, err := readBounded(path, MaxVKeyFile)
	if errors.Is(err, os.ErrNotExist) {
		if given == "" {
			return "", fmt.Errorf("%w: %s", ErrNoName, path)
		}
		return given, nil
	}
	if err != nil {
		return "", err
	}
	v, err := formats.NewCosignerVerifier(strings.TrimSuffix(string(data), "\n"))
	if err != nil {
		return "", fmt.Errorf("%w %s: %w", ErrVKeyFile, path, err)
	}
	if !v.Key().Equal(k.Public()) {
		return "", fmt.Errorf("%w %s: the verifier key of another key than %s", ErrVKeyFile, path, keyFile)
	}
	if given != "" && given != v.Name() {
		return "", fmt.Errorf("%w: %q is not the name in %s (%q); the name is part of the witness's key id", ErrNameMismatch, given, path, v.Name())
	}
	return v.Name(), nil
}

// readBounded reads the regular file at path, refusing one over limit
// bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: over %d bytes", path, limit)
	}
	return data, nil
}
