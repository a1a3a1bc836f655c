package provenance

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
)

// What GitHub's SLSA generator attested in the bundle in testdata (see
// testdata/SOURCE.md): an empty file, built from example-package at
// this commit by the container-based builder's workflow.
const (
	ghaDigest   = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	ghaCommit   = "4d329c75e7ec1725f7c9ce917a8799d408d06be3"
	ghaBuilder  = "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/builder_container-based_slsa3.yml@refs/tags/v2.1.0"
	ghaIssuer   = "https://token.actions.githubusercontent.com"
	ghaRepoPath = "github.com/slsa-framework/example-package"
)

// generatorFiles reads the bundle of GitHub's SLSA generator and the
// public-good trusted root from testdata.
func generatorFiles(t testing.TB) (bundle, trustedRoot []byte) {
	t.Helper()
	var err error
	if bundle, err = os.ReadFile("testdata/slsa-github-generator/binary-linux-amd64-workflow_dispatch.intoto.build.slsa"); err != nil {
		t.Fatal(err)
	}
	if trustedRoot, err = os.ReadFile("testdata/slsa-github-generator/trusted-root-public-good.json"); err != nil {
		t.Fatal(err)
	}
	return bundle, trustedRoot
}

// TestGitHubGeneratorBundle: a real Sigstore bundle from GitHub's SLSA
// generator verifies offline under the public-good trusted root (the
// Fulcio certificate, its SCT, the Rekor entry's inclusion proof and
// promise, at the entry's time) and says who signed it; the artifact is
// an empty file, so the build metadata a Go binary would carry is given
// here as the provenance states it. Each change is refused under its
// rule: a changed payload or certificate, another root, a key, another
// subject, builder, commit, repository, a dirty tree.
func TestGitHubGeneratorBundle(t *testing.T) {
	bundle, trustedRoot := generatorFiles(t)
	build := func() *schemas.Build {
		return &schemas.Build{GoVersion: "go1.26.8", Path: ghaRepoPath, Module: ghaRepoPath, VCS: "git", Revision: ghaCommit}
	}
	a, err := Check(bundle, Trust{Root: trustedRoot}, Expect{Digest: ghaDigest, Build: build(), Builders: []string{ghaBuilder}})
	if err != nil {
		t.Fatalf("the generator's bundle: %v", err)
	}
	if a.Builder != ghaBuilder || a.Identity != ghaBuilder || a.Issuer != ghaIssuer || a.Commit != ghaCommit ||
		a.Repository != "git+https://github.com/slsa-framework/example-package" || !strings.HasPrefix(a.Key, "sha256:") {
		t.Fatalf("attested %+v", a)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	brokenRoot := bytes.Replace(trustedRoot, []byte(`"certChain"`), []byte(`"certChainX"`), 1)
	var m map[string]any
	if err := json.Unmarshal(trustedRoot, &m); err != nil {
		t.Fatal(err)
	}
	m["certificateAuthorities"] = m["certificateAuthorities"].([]any)[:1] // the 2021 CA alone, not the one that issued the certificate
	otherRoot, _ := json.Marshal(m)
	tamperedPayload := bytes.Replace(bundle, []byte(`"payload":"eyJf`), []byte(`"payload":"eyJg`), 1)
	cert := bytes.Index(bundle, []byte(`"rawBytes":"`)) + 400
	tamperedCert := append(append(append([]byte(nil), bundle[:cert]...), 'A'^bundle[cert]^'B'), bundle[cert+1:]...)
	for _, c := range []struct {
		name   string
		bundle []byte
		trust  Trust
		edit   func(*Expect)
		rule   string
	}{
		{"payload changed", tamperedPayload, Trust{Root: trustedRoot}, nil, rules.ProvenanceSignature},
		{"certificate changed", tamperedCert, Trust{Root: trustedRoot}, nil, rules.ProvenanceSignature},
		{"another trusted root", bundle, Trust{Root: otherRoot}, nil, rules.ProvenanceSignature},
		{"not a trusted root", bundle, Trust{Root: brokenRoot}, nil, rules.ProvenanceMalformed},
		{"a key and a root", bundle, Trust{Root: trustedRoot, Key: verifierOf(t, key)}, nil, rules.ProvenanceSignature},
		{"a bare envelope under a root", envelope(t, key, PayloadType, testStatement(nil)), Trust{Root: trustedRoot}, nil, rules.ProvenanceSignature},
		{"a key instead of the root", bundle, Trust{Key: verifierOf(t, key)}, nil, rules.ProvenanceSignature},
		{"another subject", bundle, Trust{Root: trustedRoot}, func(e *Expect) { e.Digest = testDigest }, rules.ProvenanceSubject},
		{"another builder allowed", bundle, Trust{Root: trustedRoot}, func(e *Expect) { e.Builders = []string{testBuilder} }, rules.ProvenanceBuilder},
		{"another commit", bundle, Trust{Root: trustedRoot}, func(e *Expect) { e.Build.Revision = testCommit }, rules.ProvenanceSource},
		{"another repository", bundle, Trust{Root: trustedRoot}, func(e *Expect) { e.Build.Module = "github.com/evil/example-package" }, rules.ProvenanceSource},
		{"a dirty tree", bundle, Trust{Root: trustedRoot}, func(e *Expect) { e.Build.Modified = true }, rules.ProvenanceDirty},
		{"no build metadata (the file itself)", bundle, Trust{Root: trustedRoot}, func(e *Expect) { e.Build = nil }, rules.ProvenanceSource},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := Expect{Digest: ghaDigest, Build: build()}
			if c.edit != nil {
				c.edit(&want)
			}
			_, err := Check(c.bundle, c.trust, want)
			var pe *Error
			if !errors.As(err, &pe) || pe.Rule != c.rule {
				t.Fatalf("%v, want rule %s", err, c.rule)
			}
		})
	}
	rec, err := Record(bundle, Trust{Root: trustedRoot}, a)
	if err != nil {
		t.Fatal(err)
	}
	pin := &schemas.Pin{Digest: ghaDigest, Build: build(), Provenance: rec}
	if err := CheckPin(pin); err != nil {
		t.Fatalf("the recorded bundle, checked again: %v", err)
	}
	if pin.Builder() != (schemas.Builder{ID: ghaBuilder, Key: a.Key, Issuer: ghaIssuer, Identity: ghaBuilder, Source: ghaRepoPath}) {
		t.Fatalf("the pin's builder: %+v", pin.Builder())
	}
	for _, edit := range []func(*schemas.Provenance){
		func(r *schemas.Provenance) { r.Identity = "https://github.com/evil/workflow.yml@refs/heads/main" },
		func(r *schemas.Provenance) { r.Issuer, r.Identity = ghaIssuer+" x", "y" }, // the same words, split elsewhere
		func(r *schemas.Provenance) { r.Repository = "git+https://github.com/evil/example-package" },
	} {
		r := *rec
		edit(&r)
		if err := CheckPin(&schemas.Pin{Digest: ghaDigest, Build: build(), Provenance: &r}); err == nil {
			t.Fatalf("a pin recording another signer or source was checked: %+v", r)
		}
	}
}
