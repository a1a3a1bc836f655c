//go:build cgo

package sign_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"filippo.io/age"
	"github.com/miekg/pkcs11"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// rawToken is a session on the test token through the PKCS#11 API
// itself, to read and make objects as another tool would.
type rawToken struct {
	ctx *pkcs11.Ctx
	sh  pkcs11.SessionHandle
}

// openRawToken opens a read-write session on the SoftHSM test token,
// logged in. The module is the one package sign loaded (dlopen gives the
// same library, already initialized); it is neither finalized nor
// unloaded here.
func openRawToken(t *testing.T, module string) *rawToken {
	ctx := pkcs11.New(module)
	if ctx == nil {
		t.Fatalf("loading %s", module)
	}
	if err := ctx.Initialize(); err != nil && !errors.Is(err, pkcs11.Error(pkcs11.CKR_CRYPTOKI_ALREADY_INITIALIZED)) {
		t.Fatal(err)
	}
	slots, err := ctx.GetSlotList(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range slots {
		if ti, err := ctx.GetTokenInfo(s); err != nil || ti.Label != testkit.SoftHSMLabel {
			continue
		}
		sh, err := ctx.OpenSession(s, pkcs11.CKF_SERIAL_SESSION|pkcs11.CKF_RW_SESSION)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ctx.CloseSession(sh) })
		if err := ctx.Login(sh, pkcs11.CKU_USER, testkit.SoftHSMPIN); err != nil && !errors.Is(err, pkcs11.Error(pkcs11.CKR_USER_ALREADY_LOGGED_IN)) {
			t.Fatal(err)
		}
		return &rawToken{ctx: ctx, sh: sh}
	}
	t.Fatalf("no token %s", testkit.SoftHSMLabel)
	return nil
}

// one returns the one object of class with label.
func (r *rawToken) one(t *testing.T, class uint, label string) pkcs11.ObjectHandle {
	t.Helper()
	if err := r.ctx.FindObjectsInit(r.sh, []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_CLASS, class), pkcs11.NewAttribute(pkcs11.CKA_LABEL, label)}); err != nil {
		t.Fatal(err)
	}
	hs, _, err := r.ctx.FindObjects(r.sh, 2)
	r.ctx.FindObjectsFinal(r.sh)
	if err != nil || len(hs) != 1 {
		t.Fatalf("%d objects of class %d labelled %s (%v)", len(hs), class, label, err)
	}
	return hs[0]
}

// attrs reads attribute values of h.
func (r *rawToken) attrs(t *testing.T, h pkcs11.ObjectHandle, types ...uint) [][]byte {
	t.Helper()
	var q []*pkcs11.Attribute
	for _, ty := range types {
		q = append(q, pkcs11.NewAttribute(ty, nil))
	}
	got, err := r.ctx.GetAttributeValue(r.sh, h, q)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, a := range got {
		out = append(out, a.Value)
	}
	return out
}

// create makes a token object of class (an Ed25519 key) with label, id
// and the extra attributes.
func (r *rawToken) create(t *testing.T, class uint, label string, id []byte, extra ...*pkcs11.Attribute) {
	t.Helper()
	a := append([]*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_CLASS, class), pkcs11.NewAttribute(pkcs11.CKA_KEY_TYPE, 0x40),
		pkcs11.NewAttribute(pkcs11.CKA_TOKEN, true), pkcs11.NewAttribute(pkcs11.CKA_LABEL, label),
		pkcs11.NewAttribute(pkcs11.CKA_ID, id), pkcs11.NewAttribute(pkcs11.CKA_EC_PARAMS, []byte{0x06, 0x03, 0x2b, 0x65, 0x70}),
	}, extra...)
	if _, err := r.ctx.CreateObject(r.sh, a); err != nil {
		t.Fatalf("creating %s: %v", label, err)
	}
}

// importPair stores Ed25519 key seed's private half and pub as its
// public key, a raw 32-byte CKA_EC_POINT (as some tokens store it).
func (r *rawToken) importPair(t *testing.T, label string, id []byte, seed byte, pub []byte) ed25519.PrivateKey {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	r.create(t, pkcs11.CKO_PRIVATE_KEY, label, id, pkcs11.NewAttribute(pkcs11.CKA_PRIVATE, true),
		pkcs11.NewAttribute(pkcs11.CKA_SIGN, true), pkcs11.NewAttribute(pkcs11.CKA_VALUE, priv.Seed()))
	if pub != nil {
		r.create(t, pkcs11.CKO_PUBLIC_KEY, label, id, pkcs11.NewAttribute(pkcs11.CKA_EC_POINT, pub))
	}
	return priv
}

// testTokenImported reads keys other tools put in a token: a raw public
// point, two pairs under one label, a private key without its public
// key, and public and private objects of different keys.
func testTokenImported(t *testing.T, module string, uri func(string) string) {
	raw := openRawToken(t, module)
	seven := raw.importPair(t, "imported", []byte{7}, 7, testkit.Key(t, 7).Public().Raw())
	k, err := sign.LoadKey(uri("imported"), sign.KeyOptions{})
	if err != nil || k.Public().ID() != testkit.Key(t, 7).Public().ID() {
		t.Fatalf("imported key: %v", err)
	}
	msg := []byte("CKM_EDDSA is pure Ed25519 over the whole message")
	if sig, err := k.SignMessage(msg); err != nil || !bytes.Equal(sig, ed25519.Sign(seven, msg)) {
		t.Fatalf("the token's CKM_EDDSA signature is not RFC 8032 Ed25519's (%v)", err)
	}

	raw.importPair(t, "twin", []byte{1}, 10, testkit.Key(t, 10).Public().Raw())
	raw.importPair(t, "twin", []byte{2}, 11, testkit.Key(t, 11).Public().Raw())
	_, err = sign.LoadKey(uri("twin"), sign.KeyOptions{})
	wantTokenErr(t, err, sign.ErrToken, uri("twin"), `more than one Ed25519 private key (CKK_EC_EDWARDS) with label "twin" in token "writ-test"; give the id= that tells them apart`)
	if errors.Is(err, sign.ErrTokenObject) {
		t.Fatalf("two keys reported as none: %v", err)
	}
	twin2 := "pkcs11:token=writ-test;object=twin;id=%02?pin-source=" + pinSource(uri)
	if k, err := sign.LoadKey(twin2, sign.KeyOptions{}); err != nil || k.Public().ID() != testkit.Key(t, 11).Public().ID() {
		t.Fatalf("twin with id 02: %v", err)
	}

	raw.importPair(t, "lonely", []byte{3}, 12, nil)
	_, err = sign.LoadKey(uri("lonely"), sign.KeyOptions{})
	wantTokenErr(t, err, sign.ErrTokenObject, uri("lonely"), `the private key has no public key object with its CKA_ID (03) and label in token "writ-test"`)

	raw.importPair(t, "mismatched", []byte{4}, 13, testkit.Key(t, 14).Public().Raw())
	k, err = sign.LoadKey(uri("mismatched"), sign.KeyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.SignMessage(msg)
	wantTokenErr(t, err, sign.ErrToken, uri("mismatched"), "the token's signature does not verify under its public key object (the private and public objects are not one key pair)")

	raw.create(t, pkcs11.CKO_PUBLIC_KEY, "badpoint", []byte{5}, pkcs11.NewAttribute(pkcs11.CKA_EC_POINT, []byte{0x04, 0x21, 1}))
	raw.importPair(t, "badpoint", []byte{5}, 15, nil)
	_, err = sign.LoadKey(uri("badpoint"), sign.KeyOptions{})
	wantTokenErr(t, err, sign.ErrInvalidKey, uri("badpoint"), "CKA_EC_POINT is 3 bytes, neither a DER OCTET STRING of 32 bytes nor 32 raw bytes")
}

// pinSource is the test token's PIN file, from its URI builder.
func pinSource(uri func(string) string) string {
	u, err := sign.ParseTokenURI(uri("x"))
	if err != nil {
		panic(err)
	}
	return u.PINSource
}

// testTokenConcurrent signs from 8 goroutines: four share one key, four
// load their own (each its own session on the same token).
func testTokenConcurrent(t *testing.T, uri func(string) string, shared *sign.PrivateKey) {
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := shared
			if g%2 == 1 {
				var err error
				if k, err = sign.LoadKey(uri("root-2"), sign.KeyOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
			for i := range 25 {
				msg := fmt.Appendf(nil, "goroutine %d message %d", g, i)
				sig, err := k.SignMessage(msg)
				if err != nil {
					t.Error(err)
					return
				}
				if err := shared.Public().Verify(msg, sig); err != nil {
					t.Errorf("goroutine %d message %d: %v", g, i, err)
				}
			}
		}()
	}
	wg.Wait()
}

// testTokenThreshold: a 2-of-3 root whose keys are two age-encrypted key
// files and the token key; the token key counts toward the threshold
// like any other.
func testTokenThreshold(t *testing.T, tk *sign.PrivateKey) {
	pass := []byte("pw")
	to, err := sign.ScryptRecipient(pass, sign.MinWorkFactor)
	if err != nil {
		t.Fatal(err)
	}
	id, err := sign.ScryptIdentity(pass)
	if err != nil {
		t.Fatal(err)
	}
	var files []*sign.PrivateKey
	for _, name := range []string{"r1", "r3"} {
		prefix := filepath.Join(t.TempDir(), name)
		if _, err := sign.GenerateKeyFiles(prefix, []age.Recipient{to}, rand.Reader); err != nil {
			t.Fatal(err)
		}
		k, err := sign.LoadKey(prefix+".key", sign.KeyOptions{Identities: []age.Identity{id}})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, k)
	}
	f1, f3 := files[0], files[1]
	genesis := testkit.Seal(t, testkit.Root(2, f1, tk, f3), f1, tk, f3)
	e, err := sign.ParseEnvelope(genesis)
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.Verify(lookup(f1, tk, f3))
	if err != nil || len(v.Keys) != 3 || !v.Has(tk.Public()) {
		t.Fatalf("Verify = %+v, %v", v, err)
	}
	q := &schemas.Quarantine{V: 1, Machine: "runner-7", IssuedAt: testkit.Epoch.Unix() - 60}
	for _, tc := range []struct {
		name    string
		signers []*sign.PrivateKey
		rule    string
	}{
		{"a file key and the token key", []*sign.PrivateKey{f1, tk}, ""},
		{"the token key alone", []*sign.PrivateKey{tk}, delegation.RuleThreshold},
	} {
		st := delegation.NewState()
		if _, err := st.Apply(genesis, testkit.Epoch); err != nil {
			t.Fatalf("genesis root signed by two key files and the token key: %v", err)
		}
		_, err := st.Apply(testkit.Seal(t, q, tc.signers...), testkit.Epoch)
		var re *delegation.RecordError
		switch {
		case tc.rule == "" && err != nil:
			t.Fatalf("%s: %v", tc.name, err)
		case tc.rule != "" && (!errors.As(err, &re) || re.Rule != tc.rule):
			t.Fatalf("%s: %v, want rule %s", tc.name, err, tc.rule)
		}
	}
}
