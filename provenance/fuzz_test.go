package provenance

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"testing"
)

// FuzzCheck: any bytes as an envelope are refused with a rule, or vouch
// for the binary with a builder and a commit; never a panic.
func FuzzCheck(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	f.Add(envelope(f, key, PayloadType, statement(nil)))
	f.Add([]byte(`{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"sig":"AA=="}]}`))
	f.Add([]byte(`{}`))
	v := verifierOf(f, key)
	f.Fuzz(func(t *testing.T, env []byte) {
		a, err := Check(env, v, Expect{Digest: testDigest, Build: cleanBuild()})
		var pe *Error
		switch {
		case err == nil && (a.Builder == "" || a.Commit == ""):
			t.Fatalf("vouched without a builder or commit: %+v", a)
		case err != nil && !errors.As(err, &pe):
			t.Fatalf("refused without a rule: %v", err)
		}
	})
}
