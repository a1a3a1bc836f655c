package delegation_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// A root trusts one key; that key delegates "instruct" on stream demo,
// machines runner-*, for two days. Replayed into a State at the time the
// ledger accepted them, they answer "may the operator's key do this?".
func ExampleState_Authorize() {
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
	ask := func(machine string, at time.Time) {
		g, err := st.Authorize(delegation.Request{Key: op.Public(), Action: "instruct",
			Stream: "demo", Machine: machine, At: at})
		var d *delegation.Denial
		switch {
		case err == nil:
			fmt.Printf("%s: allowed by the delegation at index %d\n", machine, g.Index)
		case errors.As(err, &d):
			fmt.Printf("%s: refused, rule %s\n", machine, d.Rule)
		}
	}
	ask("runner-1", now)
	ask("builder-1", now)
	ask("runner-1", now.Add(48*time.Hour))
	// Output:
	// runner-1: allowed by the delegation at index 1
	// builder-1: refused, rule out-of-scope
	// runner-1: refused, rule outside-window
}
