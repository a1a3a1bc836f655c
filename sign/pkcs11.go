//go:build cgo

package sign

import (
	"crypto"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/miekg/pkcs11"
	"github.com/sigstore/sigstore/pkg/signature"
)

// TokensSupported reports whether this build can use keys in a PKCS#11
// token: true when built with cgo, which loading a module needs.
const TokensSupported = true

// PKCS#11 v3.0 values that github.com/miekg/pkcs11 v1.1.2 does not name.
const (
	ckkECEdwards           = 0x40   // CKK_EC_EDWARDS
	ckmECEdwardsKeyPairGen = 0x1055 // CKM_EC_EDWARDS_KEY_PAIR_GEN
	ckmEdDSA               = 0x1057 // CKM_EDDSA
)

// ed25519Params is CKA_EC_PARAMS for Ed25519: the DER OID 1.3.101.112
// (RFC 8410 §3), as PKCS#11 v3.0 §2.3.10 allows.
var ed25519Params = []byte{0x06, 0x03, 0x2b, 0x65, 0x70}

// module is one loaded and initialized PKCS#11 library.
type module struct {
	ctx  *pkcs11.Ctx
	path string
}

// modules holds each module loaded in this process, by path: C_Initialize
// and C_Finalize are process-global, so a module is initialized once and
// never finalized.
var modules = struct {
	sync.Mutex
	m map[string]*module
}{m: map[string]*module{}}

// loadModule returns the module for u: its module-path, else
// $WRIT_PKCS11_MODULE. A failure is not remembered.
func loadModule(u *TokenURI) (*module, error) {
	path, from := u.ModulePath, "module-path"
	if path == "" {
		path, from = os.Getenv(TokenModuleEnv), "$"+TokenModuleEnv
	}
	if path == "" {
		return nil, fmt.Errorf("%s: %w: no module: give module-path=/path/to/module.so in the URI, or set %s", u, ErrTokenModule, TokenModuleEnv)
	}
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%s: %w: %s %q is not an absolute path", u, ErrTokenModule, from, path)
	}
	path = filepath.Clean(path)
	modules.Lock()
	defer modules.Unlock()
	if m := modules.m[path]; m != nil {
		return m, nil
	}
	if fi, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%s: %w: %s: %w", u, ErrTokenModule, from, err)
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: %s %s is not a regular file", u, ErrTokenModule, from, path)
	}
	ctx := pkcs11.New(path)
	if ctx == nil {
		return nil, fmt.Errorf("%s: %w: %s %s is not a loadable PKCS#11 library (dlopen or C_GetFunctionList failed)", u, ErrTokenModule, from, path)
	}
	if err := ctx.Initialize(); err != nil && !isCKR(err, pkcs11.CKR_CRYPTOKI_ALREADY_INITIALIZED) {
		ctx.Destroy()
		return nil, fmt.Errorf("%s: %w: %s: C_Initialize: %w", u, ErrTokenModule, path, err)
	}
	m := &module{ctx: ctx, path: path}
	modules.m[path] = m
	return m, nil
}

// isCKR reports whether err is the PKCS#11 return value rv.
func isCKR(err error, rv uint) bool {
	var e pkcs11.Error
	return errors.As(err, &e) && uint(e) == rv
}

// openToken opens a session on the one token labelled u.Token, read-write
// when rw, and logs the user in unless the token needs no login or this
// process already is.
func (m *module) openToken(u *TokenURI, o KeyOptions, rw bool) (pkcs11.SessionHandle, error) {
	slots, err := m.ctx.GetSlotList(true)
	if err != nil {
		return 0, fmt.Errorf("%s: %w: C_GetSlotList: %w", u, ErrToken, err)
	}
	var found []uint
	var info pkcs11.TokenInfo
	for _, s := range slots {
		ti, err := m.ctx.GetTokenInfo(s)
		if err != nil {
			continue // a slot whose token went away: not the one named
		}
		if strings.TrimRight(ti.Label, " \x00") == u.Token {
			found, info = append(found, s), ti
		}
	}
	switch len(found) {
	case 0:
		return 0, fmt.Errorf("%s: %w: no token labelled %q among the %d tokens of %s", u, ErrTokenNotFound, u.Token, len(slots), m.path)
	case 1:
	default:
		return 0, fmt.Errorf("%s: %w: %d tokens of %s are labelled %q; writ does not choose between them", u, ErrToken, len(found), m.path, u.Token)
	}
	flags := uint(pkcs11.CKF_SERIAL_SESSION)
	if rw {
		flags |= pkcs11.CKF_RW_SESSION
	}
	sh, err := m.ctx.OpenSession(found[0], flags)
	if err != nil {
		return 0, fmt.Errorf("%s: %w: C_OpenSession: %w", u, ErrToken, err)
	}
	if err := m.login(u, o, sh, info); err != nil {
		m.ctx.CloseSession(sh)
		return 0, err
	}
	return sh, nil
}

// login logs the user in on sh when the token needs it.
func (m *module) login(u *TokenURI, o KeyOptions, sh pkcs11.SessionHandle, info pkcs11.TokenInfo) error {
	if info.Flags&pkcs11.CKF_LOGIN_REQUIRED == 0 {
		return nil
	}
	if si, err := m.ctx.GetSessionInfo(sh); err == nil && (si.State == pkcs11.CKS_RO_USER_FUNCTIONS || si.State == pkcs11.CKS_RW_USER_FUNCTIONS) {
		return nil
	}
	pin, err := tokenPIN(u, o)
	if err != nil {
		return err
	}
	err = m.ctx.Login(sh, pkcs11.CKU_USER, string(pin))
	clear(pin)
	switch {
	case err == nil, isCKR(err, pkcs11.CKR_USER_ALREADY_LOGGED_IN):
		return nil
	case isCKR(err, pkcs11.CKR_PIN_INCORRECT), isCKR(err, pkcs11.CKR_PIN_INVALID), isCKR(err, pkcs11.CKR_PIN_LEN_RANGE):
		return fmt.Errorf("%s: %w: token %q refused the PIN (%w)", u, ErrTokenPIN, u.Token, err)
	case isCKR(err, pkcs11.CKR_PIN_LOCKED), isCKR(err, pkcs11.CKR_PIN_EXPIRED):
		return fmt.Errorf("%s: %w: token %q: the user PIN is locked or expired (%w); the token's security officer must reset it", u, ErrTokenPIN, u.Token, err)
	}
	return fmt.Errorf("%s: %w: C_Login: %w", u, ErrToken, err)
}

// find returns the handles of the objects matching template, at most max.
func (m *module) find(sh pkcs11.SessionHandle, template []*pkcs11.Attribute, max int) ([]pkcs11.ObjectHandle, error) {
	if err := m.ctx.FindObjectsInit(sh, template); err != nil {
		return nil, err
	}
	hs, _, err := m.ctx.FindObjects(sh, max)
	if ferr := m.ctx.FindObjectsFinal(sh); err == nil {
		err = ferr
	}
	return hs, err
}

// keyTemplate is the search template for u's objects of one class.
func keyTemplate(class uint, label string, id []byte) []*pkcs11.Attribute {
	t := []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_CLASS, class),
		pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, ckkECEdwards),
	}
	if label != "" {
		t = append(t, pkcs11.NewAttribute(pkcs11.CKA_LABEL, label))
	}
	if len(id) > 0 {
		t = append(t, pkcs11.NewAttribute(pkcs11.CKA_ID, id))
	}
	return t
}

// loadTokenKey finds u's key pair in its token (see LoadKey).
func loadTokenKey(u *TokenURI, o KeyOptions) (*PrivateKey, error) {
	m, err := loadModule(u)
	if err != nil {
		return nil, err
	}
	sh, err := m.openToken(u, o, false)
	if err != nil {
		return nil, err
	}
	k, err := m.findKey(u, sh)
	if err != nil {
		m.ctx.CloseSession(sh)
		return nil, err
	}
	return k, nil
}

// findKey finds u's private key and its public key object on sh and
// returns the key, which owns sh from then on.
func (m *module) findKey(u *TokenURI, sh pkcs11.SessionHandle) (*PrivateKey, error) {
	what := fmt.Sprintf("Ed25519 private key (CKK_EC_EDWARDS) with %s in token %q", u.selector(), u.Token)
	privs, err := m.find(sh, keyTemplate(pkcs11.CKO_PRIVATE_KEY, u.Object, u.ID), 2)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w: finding the private key: %w", u, ErrToken, err)
	case len(privs) == 0:
		return nil, fmt.Errorf("%s: %w: no %s", u, ErrTokenObject, what)
	case len(privs) > 1:
		return nil, fmt.Errorf("%s: %w: more than one %s; give the id= that tells them apart", u, ErrToken, what)
	}
	attrs, err := m.ctx.GetAttributeValue(sh, privs[0], []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_ID, nil)})
	if err != nil {
		return nil, fmt.Errorf("%s: %w: reading the private key's CKA_ID: %w", u, ErrToken, err)
	}
	id := attrs[0].Value // empty: the public key is found by label alone
	pubs, err := m.find(sh, keyTemplate(pkcs11.CKO_PUBLIC_KEY, u.Object, id), 2)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w: finding the public key: %w", u, ErrToken, err)
	case len(pubs) == 0:
		return nil, fmt.Errorf("%s: %w: the private key has no public key object with its CKA_ID (%x) and label in token %q", u, ErrTokenObject, id, u.Token)
	case len(pubs) > 1:
		return nil, fmt.Errorf("%s: %w: more than one public key object has the private key's CKA_ID (%x) and label", u, ErrToken, id)
	}
	return m.newKey(u, sh, privs[0], pubs[0])
}

// selector describes the object attributes of u, for errors.
func (u *TokenURI) selector() string {
	var s []string
	if u.Object != "" {
		s = append(s, fmt.Sprintf("label %q", u.Object))
	}
	if len(u.ID) > 0 {
		s = append(s, fmt.Sprintf("id %x", u.ID))
	}
	return strings.Join(s, " and ")
}

// newKey reads the public key object and returns the key signing with
// priv on sh; a cleanup closes sh when the key is garbage.
func (m *module) newKey(u *TokenURI, sh pkcs11.SessionHandle, priv, pub pkcs11.ObjectHandle) (*PrivateKey, error) {
	attrs, err := m.ctx.GetAttributeValue(sh, pub, []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_EC_POINT, nil)})
	if err != nil {
		return nil, fmt.Errorf("%s: %w: reading the public key's CKA_EC_POINT: %w", u, ErrToken, err)
	}
	raw, err := ecPoint(attrs[0].Value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: the public key object: %w", u, ErrToken, err)
	}
	pk, err := NewPublicKey(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: the public key object: %w", u, ErrToken, err)
	}
	s := &tokenSigner{m: m, sh: sh, key: priv, pub: pk.Ed25519(), uri: u.String()}
	k, err := NewPrivateKey(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: the public key object: %w", u, ErrToken, err)
	}
	// Registered last: on an error above, the caller closes sh.
	runtime.AddCleanup(s, func(sh pkcs11.SessionHandle) { m.ctx.CloseSession(sh) }, sh)
	return k, nil
}

// ecPoint returns the 32-byte Ed25519 key from CKA_EC_POINT: a DER
// OCTET STRING (04 20 ...), as PKCS#11 v3.0 §2.3.6 says, or the raw 32
// bytes some tokens store.
func ecPoint(v []byte) ([]byte, error) {
	switch {
	case len(v) == ed25519.PublicKeySize:
		return v, nil
	case len(v) == 2+ed25519.PublicKeySize && v[0] == 0x04 && v[1] == ed25519.PublicKeySize:
		return v[2:], nil
	}
	return nil, fmt.Errorf("%w: CKA_EC_POINT is %d bytes, neither a DER OCTET STRING of 32 bytes nor 32 raw bytes", ErrInvalidKey, len(v))
}

// tokenSigner is a sigstore signature.Signer for an Ed25519 private key
// in a token. Its session is used by one call at a time.
type tokenSigner struct {
	mu  sync.Mutex
	m   *module
	sh  pkcs11.SessionHandle
	key pkcs11.ObjectHandle
	pub ed25519.PublicKey
	uri string // without PIN
}

// PublicKey returns the key's public half (a crypto/ed25519 key).
func (s *tokenSigner) PublicKey(...signature.PublicKeyOption) (crypto.PublicKey, error) {
	return ed25519.PublicKey(append([]byte(nil), s.pub...)), nil
}

// SignMessage signs the whole message (at most MaxTokenMessage bytes)
// inside the token with CKM_EDDSA (pure Ed25519, RFC 8032 §5.1.6) and
// checks the signature against the public key object's key. Errors
// wrap ErrToken and name the URI.
func (s *tokenSigner) SignMessage(message io.Reader, _ ...signature.SignOption) ([]byte, error) {
	msg, err := io.ReadAll(io.LimitReader(message, MaxTokenMessage+1))
	if err != nil {
		return nil, err
	}
	if len(msg) > MaxTokenMessage {
		return nil, fmt.Errorf("%s: %w: message longer than %d bytes", s.uri, ErrToken, MaxTokenMessage)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.m.ctx.SignInit(s.sh, []*pkcs11.Mechanism{pkcs11.NewMechanism(ckmEdDSA, nil)}, s.key); err != nil {
		return nil, fmt.Errorf("%s: %w: C_SignInit (CKM_EDDSA): %w", s.uri, ErrToken, err)
	}
	sig, err := s.m.ctx.Sign(s.sh, msg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: C_Sign: %w", s.uri, ErrToken, err)
	}
	if len(sig) != ed25519.SignatureSize || !ed25519.Verify(s.pub, msg, sig) {
		return nil, fmt.Errorf("%s: %w: the token's signature does not verify under its public key object (the private and public objects are not one key pair)", s.uri, ErrToken)
	}
	return sig, nil
}
