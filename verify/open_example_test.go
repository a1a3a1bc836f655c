package verify_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"filippo.io/age"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
)

// A ledger directory created with its root in one atomic call
// (InitAuthority), then opened by a reader under a stated trust
// (OpenAuthority): with no key given, the key the directory stores, which
// the result says; with the first root's digest asserted, a ledger whose
// first root is another one is refused with the rule and both digests.
func ExampleOpenAuthority() {
	s, _ := signature.LoadED25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)))
	rootKey, _ := sign.NewPrivateKey(s)
	now := time.Now()
	rec := &schemas.Root{V: 1, Version: 1, Keys: [][]byte{rootKey.Public().Raw()}, Threshold: 1,
		IssuedAt: now.Add(-time.Minute).Unix(), Expires: now.AddDate(1, 0, 0).Unix()}
	payload, _ := schemas.Encode(rec)
	root, _ := sign.Sign(rec.Kind(), payload, rootKey)

	parent, _ := os.MkdirTemp("", "writ-example-")
	defer os.RemoveAll(parent)
	dir := ledgerdir.Dir(filepath.Join(parent, "ledger"))
	id, _ := age.GenerateX25519Identity()
	a, err := verify.InitAuthority(dir, "example.com/authority", ledgerdir.NewKey{Recipients: []age.Recipient{id.Recipient()}, Rand: rand.Reader}, root)
	if err != nil {
		fmt.Println(err)
		return
	}
	a.Log.Close()

	a, err = verify.OpenAuthority(dir, verify.Trust{}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("verified %d entries under the stored key (given: %v)\n", a.Checkpoint.Size, a.KeyGiven)
	a.Log.Close()

	_, err = verify.OpenAuthority(dir, verify.Trust{TrustRoot: "sha256:" + fmt.Sprintf("%064d", 0)}, nil)
	var te *ledger.TrustError
	if errors.As(err, &te) {
		fmt.Printf("refused: %s (%s)\n", te.Rule, te.What)
	}
	// Output:
	// verified 1 entries under the stored key (given: false)
	// refused: root-untrusted (the first root record's digest)
}
