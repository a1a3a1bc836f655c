package provenance

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"testing"
)

// FuzzCheck: any bytes as an attestation (a DSSE envelope or a Sigstore
// bundle), checked under a key and under a trusted root, are refused
// with a rule, or vouch for the binary with a builder and a commit;
// never a panic.
func FuzzCheck(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	f.Add(envelope(f, key, PayloadType, testStatement(nil)))
	f.Add([]byte(`{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"sig":"AA=="}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`))
	bundle, root := generatorFiles(f)
	f.Add(bundle)
	v := verifierOf(f, key)
	f.Fuzz(func(t *testing.T, att []byte) {
		for _, trust := range []Trust{{Key: v}, {Root: root}} {
			a, err := Check(att, trust, Expect{Digest: testDigest, Build: cleanBuild()})
			var pe *Error
			switch {
			case err == nil && (a.Builder == "" || a.Commit == ""):
				t.Fatalf("vouched without a builder or commit: %+v", a)
			case err != nil && !errors.As(err, &pe):
				t.Fatalf("refused without a rule: %v", err)
			}
		}
	})
}

// FuzzTrustedRoot: any bytes as a trusted root are refused with a rule,
// never a panic.
func FuzzTrustedRoot(f *testing.F) {
	bundle, root := generatorFiles(f)
	f.Add(root)
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`))
	f.Fuzz(func(t *testing.T, r []byte) {
		_, err := Check(bundle, Trust{Root: r}, Expect{Digest: ghaDigest, Build: nil})
		var pe *Error
		if err == nil || !errors.As(err, &pe) {
			t.Fatalf("a bundle of an empty file vouched, or was refused without a rule: %v", err)
		}
	})
}
