package delegation_test

import (
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/provenance"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
)

// TestBuilderBinding: a pin delegation's builders bind a builder id to
// what vouches for it, here a Sigstore trusted root and the signing
// certificate's issuer and identity, with a real bundle of GitHub's SLSA
// generator (package provenance's testdata): the pin it vouches for is
// accepted; under a delegation naming the same builder id with another
// identity, another issuer, another root, a key, or another source
// repository, it is refused (provenance-builder); a certificate-bound
// builder without a source is no builder (the delegation is malformed).
func TestBuilderBinding(t *testing.T) {
	const dir = "../provenance/testdata/slsa-github-generator/"
	bundle, err := os.ReadFile(dir + "binary-linux-amd64-workflow_dispatch.intoto.build.slsa")
	if err != nil {
		t.Fatal(err)
	}
	trustedRoot, err := os.ReadFile(dir + "trusted-root-public-good.json")
	if err != nil {
		t.Fatal(err)
	}
	const (
		builderID = "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/builder_container-based_slsa3.yml@refs/tags/v2.1.0"
		issuer    = "https://token.actions.githubusercontent.com"
		digest    = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	)
	// The artifact is an empty file: the build metadata a Go binary
	// would carry is given as the provenance states it.
	build := &schemas.Build{GoVersion: "go1.26.8", Path: "github.com/slsa-framework/example-package", VCS: "git",
		Revision: "4d329c75e7ec1725f7c9ce917a8799d408d06be3"}
	trust := provenance.Trust{Root: trustedRoot}
	a, err := provenance.Check(bundle, trust, provenance.Expect{Digest: digest, Build: build})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := provenance.Record(bundle, trust, a)
	if err != nil {
		t.Fatal(err)
	}
	pin := testkit.Pin("linux/amd64", digest, 1)
	pin.Build, pin.Provenance = build, rec
	rootDigest := schemas.SHA256Digest(trustedRoot)
	r1, rel := testkit.Key(t, 1), testkit.Key(t, 11)
	good := schemas.Builder{ID: builderID, Key: rootDigest, Issuer: issuer, Identity: builderID, Source: "github.com/slsa-framework/example-package"}
	for _, tc := range []struct {
		name string
		edit func(*schemas.Builder)
		rule string
	}{
		{"the builder, its root and certificate", nil, ""},
		{"another identity", func(b *schemas.Builder) {
			b.Identity = "https://github.com/evil/repo/.github/workflows/x.yml@refs/heads/main"
		}, rules.ProvenanceBuilder},
		{"another issuer", func(b *schemas.Builder) { b.Issuer = "https://accounts.google.com" }, rules.ProvenanceBuilder},
		{"another root", func(b *schemas.Builder) { b.Key = "sha256:" + hex.EncodeToString(make([]byte, 32)) }, rules.ProvenanceBuilder},
		{"a key, no certificate", func(b *schemas.Builder) { b.Issuer, b.Identity, b.Source = "", "", "" }, rules.ProvenanceBuilder},
		// Every repository that calls the generator gets the same
		// certificate subject: the source binds the repository.
		{"another repository", func(b *schemas.Builder) { b.Source = "github.com/our-org/agent" }, rules.ProvenanceBuilder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := good
			if tc.edit != nil {
				tc.edit(&b)
			}
			d := testkit.Delegation(rel, []string{"pin"}, "", "")
			d.Builders = []schemas.Builder{b}
			chain(t, tc.rule, testkit.Seal(t, testkit.Root(1, r1), r1), testkit.Seal(t, d, r1), testkit.Seal(t, pin, rel))
		})
	}
	d := testkit.Delegation(rel, []string{"pin"}, "", "")
	b := good
	b.Source = ""
	d.Builders = []schemas.Builder{b}
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "source repository") {
		t.Fatalf("a certificate-bound builder without a source: %v", err)
	}
}

// TestBuilderSourceAttenuation: a re-delegation may bind a builder to a
// source repository its parent left open, never open one its parent
// bound.
func TestBuilderSourceAttenuation(t *testing.T) {
	r1, rel, sub := testkit.Key(t, 1), testkit.Key(t, 11), testkit.Key(t, 12)
	open := schemas.Builder{ID: "https://ci.example/b", Key: schemas.SHA256Digest([]byte("key"))}
	bound := open
	bound.Source = "github.com/our-org/agent"
	for _, tc := range []struct {
		name          string
		parent, child schemas.Builder
		rule          string
	}{
		{"binding a source the parent left open", open, bound, ""},
		{"the same binding", bound, bound, ""},
		{"opening a source the parent bound", bound, open, delegation.RuleNotAttenuated},
		{"another source", bound, schemas.Builder{ID: open.ID, Key: open.Key, Source: "github.com/evil/agent"}, delegation.RuleNotAttenuated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testkit.Delegation(rel, []string{"delegate", "pin"}, "", "")
			p.Depth, p.Builders = 1, []schemas.Builder{tc.parent}
			c := testkit.Delegation(sub, []string{"pin"}, "", "")
			c.Builders = []schemas.Builder{tc.child}
			chain(t, tc.rule, testkit.Seal(t, testkit.Root(1, r1), r1), testkit.Seal(t, p, r1), testkit.Seal(t, c, rel))
		})
	}
}
