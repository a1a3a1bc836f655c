//go:build cgo

package sign

import (
	"fmt"

	"github.com/miekg/pkcs11"
)

// tokenKeyIDSize is the length of the CKA_ID GenerateTokenKey gives a
// new key pair when the URI has no id, in bytes.
const tokenKeyIDSize = 16

// generateTokenKey makes u's key pair inside its token (see
// GenerateTokenKey).
func generateTokenKey(u *TokenURI, o KeyOptions) (*PrivateKey, error) {
	m, err := loadModule(u)
	if err != nil {
		return nil, err
	}
	sh, err := m.openToken(u, o, true)
	if err != nil {
		return nil, err
	}
	k, err := m.generate(u, sh)
	if err != nil {
		m.ctx.CloseSession(sh)
		return nil, err
	}
	return k, nil
}

// generate makes the key pair on sh, which the key owns from then on.
func (m *module) generate(u *TokenURI, sh pkcs11.SessionHandle) (*PrivateKey, error) {
	for _, a := range []struct {
		attr *pkcs11.Attribute
		what string
	}{
		{pkcs11.NewAttribute(pkcs11.CKA_LABEL, u.Object), fmt.Sprintf("label %q", u.Object)},
		{pkcs11.NewAttribute(pkcs11.CKA_ID, u.ID), fmt.Sprintf("id %x", u.ID)},
	} {
		if len(a.attr.Value) == 0 {
			continue
		}
		hs, err := m.find(sh, []*pkcs11.Attribute{a.attr}, 1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: looking for existing objects: %w", u, ErrToken, err)
		}
		if len(hs) > 0 {
			return nil, existsError(fmt.Sprintf("%s: %v: token %q already holds an object with %s; writ never replaces a key", u, ErrToken, u.Token, a.what))
		}
	}
	id := u.ID
	if len(id) == 0 {
		var err error
		if id, err = m.ctx.GenerateRandom(sh, tokenKeyIDSize); err != nil || len(id) != tokenKeyIDSize {
			if err == nil {
				err = fmt.Errorf("%d bytes, not %d", len(id), tokenKeyIDSize)
			}
			return nil, fmt.Errorf("%s: %w: C_GenerateRandom for the new key's CKA_ID: %w", u, ErrToken, err)
		}
	}
	common := func(class uint) []*pkcs11.Attribute {
		return []*pkcs11.Attribute{
			pkcs11.NewAttribute(pkcs11.CKA_CLASS, class),
			pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, ckkECEdwards),
			pkcs11.NewAttribute(pkcs11.CKA_TOKEN, true),
			pkcs11.NewAttribute(pkcs11.CKA_LABEL, u.Object),
			pkcs11.NewAttribute(pkcs11.CKA_ID, id),
		}
	}
	pubT := append(common(pkcs11.CKO_PUBLIC_KEY),
		pkcs11.NewAttribute(pkcs11.CKA_EC_PARAMS, ed25519Params),
		pkcs11.NewAttribute(pkcs11.CKA_PRIVATE, false),
		pkcs11.NewAttribute(pkcs11.CKA_VERIFY, true),
	)
	privT := append(common(pkcs11.CKO_PRIVATE_KEY),
		pkcs11.NewAttribute(pkcs11.CKA_PRIVATE, true),
		pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, true),
		pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, false),
		pkcs11.NewAttribute(pkcs11.CKA_SIGN, true),
		pkcs11.NewAttribute(pkcs11.CKA_DECRYPT, false),
		pkcs11.NewAttribute(pkcs11.CKA_UNWRAP, false),
		pkcs11.NewAttribute(pkcs11.CKA_DERIVE, false),
	)
	mech := []*pkcs11.Mechanism{pkcs11.NewMechanism(ckmECEdwardsKeyPairGen, nil)}
	pub, priv, err := m.ctx.GenerateKeyPair(sh, mech, pubT, privT)
	if isCKR(err, pkcs11.CKR_MECHANISM_INVALID) {
		return nil, fmt.Errorf("%s: %w: token %q does not generate Ed25519 keys (CKM_EC_EDWARDS_KEY_PAIR_GEN)", u, ErrToken, u.Token)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w: C_GenerateKeyPair (Ed25519): %w", u, ErrToken, err)
	}
	destroy := func() {
		m.ctx.DestroyObject(sh, priv)
		m.ctx.DestroyObject(sh, pub)
	}
	// The token must keep the key as asked: never readable outside it.
	got, err := m.ctx.GetAttributeValue(sh, priv, []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, nil),
		pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, nil),
	})
	if err != nil || len(got) != 2 || !isTrue(got[0].Value) || isTrue(got[1].Value) {
		destroy()
		return nil, fmt.Errorf("%s: %w: token %q did not keep the new private key sensitive and non-extractable (%w); both objects destroyed", u, ErrToken, u.Token, err)
	}
	k, err := m.newKey(u, sh, priv, pub)
	if err != nil {
		destroy()
		return nil, err
	}
	return k, nil
}

// isTrue reads a CK_BBOOL attribute value: one byte, non-zero is true.
func isTrue(v []byte) bool { return len(v) == 1 && v[0] != 0 }

// existsError is a refusal to make a key pair over an existing object:
// it is both ErrToken and ErrExists.
type existsError string

func (e existsError) Error() string { return string(e) }

// Is reports whether target is ErrToken or ErrExists.
func (e existsError) Is(target error) bool { return target == ErrToken || target == ErrExists }
