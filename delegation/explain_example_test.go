package delegation_test

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// The answer to "may the operator's key instruct?" with its reasons:
// allowed with the chain of delegations, or not with the rule (the JSON
// of writ authority explain).
func ExampleState_Explain() {
	key := func(n byte) *sign.PrivateKey { // a fixed seed, for stable output
		s, _ := signature.LoadED25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, 32)))
		k, _ := sign.NewPrivateKey(s)
		return k
	}
	seal := func(r schemas.Record, k *sign.PrivateKey) []byte {
		payload, _ := schemas.Encode(r)
		env, _ := sign.Sign(r.Kind(), payload, k)
		return env
	}
	rootKey, op := key(1), key(10)
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	root := &schemas.Root{V: 1, Version: 1, Keys: [][]byte{rootKey.Public().Raw()}, Threshold: 1,
		IssuedAt: now.Add(-time.Hour).Unix(), Expires: now.AddDate(1, 0, 0).Unix()}
	grant := &schemas.Delegation{V: 1, Key: op.Public().Raw(), Actions: []schemas.Action{"instruct"},
		Streams: []string{"demo"}, Machines: []string{"runner-*"},
		NotBefore: now.Add(-24 * time.Hour).Unix(), NotAfter: now.Add(24 * time.Hour).Unix(),
		IssuedAt: now.Add(-time.Hour).Unix()}
	st := delegation.NewState()
	for _, entry := range [][]byte{seal(root, rootKey), seal(grant, rootKey)} {
		if _, err := st.Apply(entry, now); err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, machine := range []string{"runner-1", "builder-1"} {
		e, err := st.Explain(delegation.Request{Key: op.Public(), Action: "instruct", Stream: "demo", Machine: machine, At: now})
		if e == nil {
			fmt.Println(err)
			return
		}
		if e.Allowed {
			fmt.Printf("%s: allowed; %d link, issued by %s\n", machine, len(e.Chain), e.Chain[0].IssuedBy)
		} else {
			fmt.Printf("%s: not allowed, rule %s\n", machine, e.Rule)
		}
	}
	// Output:
	// runner-1: allowed; 1 link, issued by the root threshold
	// builder-1: not allowed, rule out-of-scope
}
