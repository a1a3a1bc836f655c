package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sigstore/sigstore/pkg/signature"
)

// Plain key files: a private key kept unencrypted, protected by the file
// system alone (its owner and mode), for a machine key that must sign
// without a person present (a runner's key). Anyone who can read the file
// has the key; see LIMITATIONS.md.

// MaxPlainKeyFile is the largest plain private key file read, in bytes.
// The file writ writes is 119 bytes; the bound keeps a hostile path (a
// device, a huge file) from being read into memory.
const MaxPlainKeyFile = 1 << 10

// ErrKeyFileOwner: a plain private key file is not owned by the user id
// the process runs as, so another account could have written or replaced
// it.
var ErrKeyFileOwner = errors.New("private key file not owned by this user")

// pemAgeArmor begins an armored age file (an encrypted key file).
const pemAgeArmor = "-----BEGIN AGE ENCRYPTED FILE-----"

// GeneratePlainKeyFiles creates a new Ed25519 key from rand and writes
// prefix+".key", the key's PKCS #8 PEM ("PRIVATE KEY", RFC 8410)
// unencrypted, created exclusively (O_EXCL) with mode 0600 and synced,
// and prefix+".pub" (PEM PKIX, mode 0644). It refuses, with ErrExists and
// without writing, if either file exists; if the public file cannot be
// written, the key file is removed again. It returns the loaded key.
func GeneratePlainKeyFiles(prefix string, rand io.Reader) (*PrivateKey, error) {
	keyPath, pubPath, priv, err := freshKey(prefix, rand)
	if err != nil {
		return nil, err
	}
	plain, err := plainKeyPEM(priv)
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	key, err := plainSigner(priv)
	if err != nil {
		return nil, err
	}
	if err := writeExclusive(keyPath, plain, 0o600); err != nil {
		return nil, err
	}
	if err := writeExclusive(pubPath, key.public.PEM(), 0o644); err != nil {
		os.Remove(keyPath)
		return nil, err
	}
	return key, nil
}

// LoadPlainKey reads a plain private key file (GeneratePlainKeyFiles).
// The file is opened once and judged on the opened descriptor, so the
// file checked is the file read: it must be a regular file, owned by the
// user id this process runs as (ErrKeyFileOwner), with no permission for
// group or others (mode & 077 == 0, ErrKeyFilePermissions), and at most
// MaxPlainKeyFile bytes; its content must be what ParsePlainKeyPEM
// accepts (ErrInvalidKey). Errors name the path.
func LoadPlainKey(path string) (*PrivateKey, error) {
	f, err := openSecretFile(path, "a plain key file", ": a plain key file must be readable only by its owner")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPlainKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer clear(data)
	if len(data) > MaxPlainKeyFile {
		return nil, fmt.Errorf("%s: %w: file is larger than %d bytes", path, ErrInvalidKey, MaxPlainKeyFile)
	}
	k, err := ParsePlainKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ParsePlainKeyPEM parses a plain private key: exactly one PEM "PRIVATE
// KEY" block without headers, holding a PKCS #8 Ed25519 key (RFC 8410),
// with nothing but ASCII whitespace around it. Only the canonical form is
// accepted: up to surrounding whitespace and CRLF line ends, the text must
// be byte for byte what GeneratePlainKeyFiles writes (one key, one file
// form; no PKCS #8 v2 attributes, no stray base64 padding bits). Errors
// wrap ErrInvalidKey and never quote the input; an age-encrypted key file
// is named as such.
func ParsePlainKeyPEM(data []byte) (*PrivateKey, error) {
	if bytes.HasPrefix(trimASCII(data), []byte(pemAgeArmor)) {
		return nil, fmt.Errorf("%w: an age-encrypted key file, not a plain one", ErrInvalidKey)
	}
	block, rest := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrInvalidKey)
	}
	defer clear(block.Bytes)
	if len(trimASCII(rest)) != 0 {
		return nil, fmt.Errorf("%w: data after the PEM block", ErrInvalidKey)
	}
	if block.Type != "PRIVATE KEY" || len(block.Headers) != 0 {
		return nil, fmt.Errorf("%w: PEM block is %q, want \"PRIVATE KEY\" without headers", ErrInvalidKey, block.Type)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: not a PKCS #8 private key", ErrInvalidKey)
	}
	priv, ok := parsed.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: key is %T, writ accepts Ed25519 only", ErrInvalidKey, parsed)
	}
	canonical, err := plainKeyPEM(priv)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	defer clear(canonical)
	text := bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	defer clear(text)
	if !bytes.Equal(trimASCII(text), trimASCII(canonical)) {
		return nil, fmt.Errorf("%w: non-canonical PEM or PKCS #8 encoding", ErrInvalidKey)
	}
	return plainSigner(priv)
}

// plainKeyPEM is the PEM of priv as a plain key file holds it.
func plainKeyPEM(priv ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	defer clear(der)
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// plainSigner wraps priv in a PrivateKey (its public key checked as
// NewPublicKey does).
func plainSigner(priv ed25519.PrivateKey) (*PrivateKey, error) {
	s, err := signature.LoadED25519Signer(priv)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	return NewPrivateKey(s)
}
