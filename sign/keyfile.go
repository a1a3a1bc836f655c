package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"filippo.io/age"
	"filippo.io/age/armor"
	"github.com/sigstore/sigstore/pkg/signature"
)

// scrypt work factors (log2 of the scrypt N parameter) for key files.
const (
	// DefaultWorkFactor is age's default: about 1.4 s to unlock a key on a
	// 2-core machine here, which is the cost of guessing one passphrase.
	DefaultWorkFactor = 18
	// MinWorkFactor is the lowest accepted when writing a key (about 3 ms).
	// It exists for throwaway keys (tests, `writ quickstart`) and must not
	// be used for keys that guard real authority.
	MinWorkFactor = 10
	// MaxWorkFactor is the highest accepted when writing or reading a key:
	// scrypt with N = 2^20 and r = 8 needs 1 GiB of memory and about 6 s
	// here, which bounds what a hostile key file can make writ spend (age's
	// own bound, 22, would be 4 GiB and 44 s).
	MaxWorkFactor = 20
	// MaxPrivateKeyFile is the largest private key file read, in bytes.
	MaxPrivateKeyFile = 16 << 10
)

// Errors for private key files.
var (
	// ErrKeyFilePermissions: the private key file is readable or writable
	// by group or others (mode & 077 != 0).
	ErrKeyFilePermissions = errors.New("private key file permissions too open")
	// ErrPublicKeyFile: the file given as a private key is a PEM public
	// key (a .pub), whose mode does not matter.
	ErrPublicKeyFile = errors.New("a public key file, not a private key")
	// ErrPrivateKeyFile: the file given as a public key is a private key
	// file (age-encrypted, or a plain PKCS#8 private key).
	ErrPrivateKeyFile = errors.New("a private key file, not a public key")
	// ErrWrongPassphrase: the passphrase does not decrypt the key file.
	ErrWrongPassphrase = errors.New("wrong passphrase")
	// ErrNoIdentity: none of the age identities given decrypts the key
	// file.
	ErrNoIdentity = errors.New("no identity given decrypts the key file")
	// ErrExists: a key file to be written already exists; nothing was
	// overwritten.
	ErrExists = errors.New("key file already exists")
)

// PrivateKey signs with an Ed25519 key through a sigstore
// signature.Signer. It is safe for concurrent use if the signer is.
type PrivateKey struct {
	signer signature.Signer
	public PublicKey
}

// NewPrivateKey wraps any sigstore signer whose public key is Ed25519 (a
// file key, a KMS or an HSM). It returns an error wrapping ErrInvalidKey
// for any other key type.
func NewPrivateKey(s signature.Signer) (*PrivateKey, error) {
	pub, err := s.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("reading signer's public key: %w", err)
	}
	ed, ok := pub.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: signer's key is %T, writ accepts Ed25519 only", ErrInvalidKey, pub)
	}
	pk, err := NewPublicKey(ed)
	if err != nil {
		return nil, err
	}
	return &PrivateKey{signer: s, public: pk}, nil
}

// Public returns the key's public half.
func (k *PrivateKey) Public() PublicKey { return k.public }

// SignMessage returns the 64-byte Ed25519 signature (RFC 8032 §5.1.6) of
// msg.
func (k *PrivateKey) SignMessage(msg []byte) ([]byte, error) {
	return k.signer.SignMessage(bytes.NewReader(msg))
}

// ScryptRecipient returns the age recipient that encrypts a key file to
// passphrase (scrypt, RFC 7914) with workFactor, which must be within
// [MinWorkFactor, MaxWorkFactor]; the passphrase must not be empty.
func ScryptRecipient(passphrase []byte, workFactor int) (age.Recipient, error) {
	if len(passphrase) == 0 {
		return nil, errors.New("empty passphrase")
	}
	if workFactor < MinWorkFactor || workFactor > MaxWorkFactor {
		return nil, fmt.Errorf("work factor %d: must be between %d and %d", workFactor, MinWorkFactor, MaxWorkFactor)
	}
	r, err := age.NewScryptRecipient(string(passphrase))
	if err != nil {
		return nil, err
	}
	r.SetWorkFactor(workFactor)
	return r, nil
}

// ScryptIdentity returns the age identity that decrypts a key file
// encrypted to passphrase, accepting work factors up to MaxWorkFactor.
func ScryptIdentity(passphrase []byte) (age.Identity, error) {
	id, err := age.NewScryptIdentity(string(passphrase))
	if err != nil {
		return nil, err
	}
	id.SetMaxWorkFactor(MaxWorkFactor)
	return id, nil
}

// ParseRecipients parses age X25519 recipients ("age1..."). Key files
// encrypted to them are unlocked with the matching identity file instead
// of a passphrase.
func ParseRecipients(recipients []string) ([]age.Recipient, error) {
	var out []age.Recipient
	for _, s := range recipients {
		r, err := age.ParseX25519Recipient(s)
		if err != nil {
			return nil, fmt.Errorf("recipient %q: %w", s, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// LoadIdentities reads an age identity file (lines "AGE-SECRET-KEY-1...",
// comments with '#'). Like a private key file, it is refused when it is
// readable or writable by group or others (ErrKeyFilePermissions).
func LoadIdentities(path string) ([]age.Identity, error) {
	data, err := readPrivateFile(path)
	if err != nil {
		return nil, err
	}
	ids, err := age.ParseIdentities(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ids, nil
}

// freshKey returns the key and public key paths of prefix (PREFIX.key,
// PREFIX.pub) and a new Ed25519 key from rand, or ErrExists naming the
// first of the two files that exists already (nothing is written).
func freshKey(prefix string, rand io.Reader) (keyPath, pubPath string, priv ed25519.PrivateKey, err error) {
	keyPath, pubPath = prefix+".key", prefix+".pub"
	for _, p := range []string{keyPath, pubPath} {
		if _, err := os.Lstat(p); err == nil {
			return "", "", nil, fmt.Errorf("%s: %w", p, ErrExists)
		}
	}
	_, priv, err = ed25519.GenerateKey(rand)
	return keyPath, pubPath, priv, err
}

// GenerateKeyFiles creates a new Ed25519 key from rand and writes
// prefix+".key" (an armored age file encrypted to the recipients: a
// passphrase via ScryptRecipient, or X25519 recipients; mode 0600) and
// prefix+".pub" (PEM PKIX, mode 0644). It refuses, with ErrExists and
// without writing, if either file exists. The raw key never touches disk
// unencrypted. It returns the loaded key.
func GenerateKeyFiles(prefix string, to []age.Recipient, rand io.Reader) (*PrivateKey, error) {
	if len(to) == 0 {
		return nil, errors.New("no recipient to encrypt the key file to")
	}
	keyPath, pubPath, priv, err := freshKey(prefix, rand)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	plain := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	defer clear(plain)
	defer clear(der)
	var sealed bytes.Buffer
	aw := armor.NewWriter(&sealed)
	w, err := age.Encrypt(aw, to...)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(plain); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if err := aw.Close(); err != nil {
		return nil, err
	}
	s, err := signature.LoadED25519Signer(priv)
	if err != nil {
		return nil, err
	}
	key, err := NewPrivateKey(s)
	if err != nil {
		return nil, err
	}
	if err := writeExclusive(keyPath, sealed.Bytes(), 0o600); err != nil {
		return nil, err
	}
	if err := writeExclusive(pubPath, key.public.PEM(), 0o644); err != nil {
		os.Remove(keyPath)
		return nil, err
	}
	return key, nil
}

// readPrivateFile opens a secret file once, refuses it if it is not a
// regular file or its mode lets group or others read or write it (judged
// on the opened descriptor, so the file checked is the file read), and
// reads at most MaxPrivateKeyFile bytes.
func readPrivateFile(path string) ([]byte, error) {
	f, err := openSecretFile(path, "a private file (key or PIN)", "")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPrivateKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxPrivateKeyFile {
		return nil, fmt.Errorf("%s: file is larger than %d bytes", path, MaxPrivateKeyFile)
	}
	return data, nil
}

// openSecretFile opens a secret file for reading and checks the opened
// descriptor (so the file checked is the file read): a regular file (a
// directory is an *fs.PathError wrapping syscall.EISDIR; a FIFO opens at
// once, with O_NONBLOCK, and is refused rather than waited on), owned by the user this process runs as (ErrKeyFileOwner), closed
// to group and others (ErrKeyFilePermissions). what names the kind of
// file in the owner error; permNote follows the mode in the permissions
// error.
func openSecretFile(path, what, permNote string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	switch {
	case err == nil && fi.IsDir():
		err = &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	case err == nil && !fi.Mode().IsRegular():
		err = fmt.Errorf("%s: not a regular file", path)
	}
	if err == nil {
		st, ok := fi.Sys().(*syscall.Stat_t)
		switch uid := os.Getuid(); {
		case !ok:
			err = fmt.Errorf("%s: %w: the file's owner cannot be read on this system", path, ErrKeyFileOwner)
		case int64(st.Uid) != int64(uid):
			err = fmt.Errorf("%s: %w: owned by uid %d, this process runs as uid %d; %s must belong to the account that uses it", path, ErrKeyFileOwner, st.Uid, uid, what)
		}
	}
	if err == nil && isPublicKeyPEM(f) {
		err = fmt.Errorf("%s: %w: give the private key file (writ key generate writes PREFIX.key beside PREFIX.pub)", path, ErrPublicKeyFile)
	}
	if err == nil && fi.Mode().Perm()&0o077 != 0 {
		err = fmt.Errorf("%s: %w: mode %04o, want 0600%s (chmod 600 %s)", path, ErrKeyFilePermissions, fi.Mode().Perm(), permNote, path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// isPublicKeyPEM reports whether f starts with a PEM public key header
// (after optional whitespace), reading at most 64 bytes at offset 0.
func isPublicKeyPEM(f *os.File) bool {
	head := make([]byte, 64)
	n, _ := f.ReadAt(head, 0)
	return bytes.HasPrefix(bytes.TrimLeft(head[:n], " \t\r\n"), []byte("-----BEGIN PUBLIC KEY-----"))
}

// stanzaX25519 reports whether an age file (armored) is encrypted to an
// X25519 recipient, read from its plaintext header, to say which secret
// it needs.
func stanzaX25519(sealed []byte) bool {
	hdr, _ := io.ReadAll(io.LimitReader(armor.NewReader(bytes.NewReader(sealed)), 4096))
	return bytes.Contains(hdr, []byte("\n-> X25519 "))
}

// LoadPrivateKey decrypts a key file written by GenerateKeyFiles with the
// given identities (ScryptIdentity for a passphrase, or X25519 identities
// from LoadIdentities). It refuses, first, a file that is no writ key
// file at all (ErrNotKeyFile, saying what it is instead, never its
// bytes); a file with mode & 077 != 0 (ErrKeyFilePermissions) before
// reading it; identities that do not decrypt it (ErrWrongPassphrase when
// only passphrases were tried, ErrNoIdentity otherwise); a work factor
// above MaxWorkFactor; and a plaintext that is not one PKCS #8 Ed25519
// key (ErrInvalidKey).
func LoadPrivateKey(path string, ids ...age.Identity) (*PrivateKey, error) {
	if err := checkKeyFileKind(path); err != nil {
		return nil, err
	}
	sealed, err := readPrivateFile(path)
	if err != nil {
		return nil, err
	}
	r, err := age.Decrypt(armor.NewReader(bytes.NewReader(sealed)), ids...)
	if err != nil {
		var noMatch *age.NoIdentityMatchError
		if errors.As(err, &noMatch) {
			for _, id := range ids {
				if _, ok := id.(*age.ScryptIdentity); !ok {
					return nil, fmt.Errorf("%s: %w", path, ErrNoIdentity)
				}
			}
			if stanzaX25519(sealed) {
				return nil, fmt.Errorf("%s: %w: the key file is encrypted to an age recipient, not a passphrase; unlock it with --identity", path, ErrNoIdentity)
			}
			return nil, fmt.Errorf("%s: %w", path, ErrWrongPassphrase)
		}
		return nil, fmt.Errorf("%s: decrypting key file: %w", path, err)
	}
	plain, err := io.ReadAll(io.LimitReader(r, MaxPrivateKeyFile))
	if err != nil {
		return nil, fmt.Errorf("%s: decrypting key file: %w", path, err)
	}
	defer clear(plain)
	block, rest := pem.Decode(plain)
	if block == nil || block.Type != "PRIVATE KEY" || len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("%s: %w: plaintext is not one PEM PRIVATE KEY block", path, ErrInvalidKey)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrInvalidKey, err)
	}
	priv, ok := parsed.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: %w: key is %T, writ accepts Ed25519 only", path, ErrInvalidKey, parsed)
	}
	s, err := signature.LoadED25519Signer(priv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrInvalidKey, err)
	}
	return NewPrivateKey(s)
}

// writeExclusive creates path with perm, failing if it exists, and syncs
// it to disk before returning.
func writeExclusive(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s: %w", path, ErrExists)
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}
