package sign_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// A record is signed as its kind, parsed from the bytes received, and
// verified under a key the verifier trusts; a changed byte does not
// verify. The key comes from a fixed seed so the output is stable: a
// real key is generated (GenerateKeyFiles) or held by a token.
func ExampleSign() {
	seed := bytes.Repeat([]byte{1}, ed25519.SeedSize)
	signer, err := signature.LoadED25519Signer(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		fmt.Println(err)
		return
	}
	key, err := sign.NewPrivateKey(signer)
	if err != nil {
		fmt.Println(err)
		return
	}
	payload, err := schemas.Encode(&schemas.Instruction{V: 1, ID: "0123456789abcdef0123456789abcdef",
		Stream: "demo", Machine: "runner-1", Agent: schemas.ArtifactRef{Name: "agent"}, Transport: "ssh",
		IssuedAt: 1795946400, NotBefore: 1795946400, Expires: 1795950000})
	if err != nil {
		fmt.Println(err)
		return
	}
	env, err := sign.Sign(schemas.KindInstruction, payload, key)
	if err != nil {
		fmt.Println(err)
		return
	}

	// The verifier trusts exactly one key, looked up by key id.
	trusted := key.Public()
	lookup := func(id string) (sign.PublicKey, bool) { return trusted, id == trusted.ID() }
	e, err := sign.ParseEnvelope(env)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := e.Verify(lookup)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e.Kind, "signed by", v.Keys[0].ID()[:16], "valid")

	env[len(env)-1] ^= 1 // the last byte of the signature
	e, err = sign.ParseEnvelope(env)
	if err == nil {
		_, err = e.Verify(lookup)
	}
	fmt.Println(errors.Is(err, sign.ErrBadSignature))
	// Output:
	// instruction signed by fd110d301d2f077d valid
	// true
}
