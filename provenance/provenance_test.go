package provenance

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
)

const (
	testDigest  = "sha256:5f2b9a4c8e7d6f1a0b3c2d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f607182"
	testCommit  = "0123456789abcdef0123456789abcdef01234567"
	testBuilder = "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/builder_go_slsa3.yml@refs/tags/v2.1.0"
)

// testStatement is an in-toto Statement v1 with an SLSA provenance v1
// predicate, as the GitHub generator writes one, edited by edit.
func testStatement(edit func(map[string]any)) []byte {
	st := map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": "agent", "digest": map[string]any{"sha256": strings.TrimPrefix(testDigest, "sha256:")}}},
		"predicateType": PredicateType,
		"predicate": map[string]any{
			"buildDefinition": map[string]any{
				"buildType":          "https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1",
				"externalParameters": map[string]any{"workflow": map[string]any{"ref": "refs/heads/main", "repository": "https://github.com/example/agent", "path": ".github/workflows/release.yml"}},
				"resolvedDependencies": []any{map[string]any{"uri": "git+https://github.com/example/agent@refs/heads/main",
					"digest": map[string]any{"gitCommit": testCommit}}},
			},
			"runDetails": map[string]any{"builder": map[string]any{"id": testBuilder}, "metadata": map[string]any{"invocationId": "https://github.com/example/agent/actions/runs/1/attempts/1"}},
		},
	}
	if edit != nil {
		edit(st)
	}
	b, _ := json.Marshal(st)
	return b
}

// envelope signs payload with key as a DSSE envelope (DER signature, as
// cosign writes it).
func envelope(t testing.TB, key *ecdsa.PrivateKey, payloadType string, payload []byte) []byte {
	s, err := signature.LoadECDSASigner(key, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := s.SignMessage(strings.NewReader(string(dsse.PAE(payloadType, payload))))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(dsse.Envelope{PayloadType: payloadType, Payload: base64.StdEncoding.EncodeToString(payload),
		Signatures: []dsse.Signature{{KeyID: "", Sig: base64.StdEncoding.EncodeToString(sig)}}})
	return b
}

func verifierOf(t testing.TB, key *ecdsa.PrivateKey) signature.Verifier {
	pemBytes, err := cryptoutils.MarshalPublicKeyToPEM(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := LoadKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func cleanBuild() *schemas.Build {
	return &schemas.Build{GoVersion: "go1.26.8", Path: "github.com/example/agent/cmd/agent", Module: "github.com/example/agent",
		VCS: "git", Revision: testCommit, Modified: false}
}

// TestCheck: each mismatch is refused under its own rule, with the
// evidence; a provenance that vouches for the binary says what it saw.
func TestCheck(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	good := envelope(t, key, PayloadType, testStatement(nil))
	for _, c := range []struct {
		name     string
		env      []byte
		key      *ecdsa.PrivateKey
		want     func(*Expect)
		rule     string
		evidence string
	}{
		{name: "vouches", env: good},
		{name: "allowed builder", env: good, want: func(e *Expect) { e.Builders = []string{"x", testBuilder} }},
		{name: "other key", env: good, key: other, rule: rules.ProvenanceSignature},
		{name: "tampered payload", env: []byte(strings.Replace(string(good), `"payload":"`, `"payload":"eyJ`, 1)), rule: rules.ProvenanceSignature},
		{name: "not an envelope", env: []byte(`{"payloadType":"x","payload":"","signatures":[],"extra":1}`), rule: rules.ProvenanceMalformed},
		{name: "larger than a pin records", env: append(append([]byte(nil), good...), make([]byte, MaxEnvelopeSize)...), rule: rules.ProvenanceMalformed,
			evidence: "over the 40960 a pin records"},
		{name: "other payload type", env: envelope(t, key, "text/plain", testStatement(nil)), rule: rules.ProvenanceMalformed, evidence: "found text/plain"},
		{name: "other predicate", env: envelope(t, key, PayloadType, testStatement(func(m map[string]any) { m["predicateType"] = "https://slsa.dev/provenance/v0.2" })),
			rule: rules.ProvenanceMalformed},
		{name: "other subject", env: good, want: func(e *Expect) { e.Digest = "sha256:" + strings.Repeat("0", 64) }, rule: rules.ProvenanceSubject,
			evidence: "found agent sha256:5f2b"},
		{name: "builder not allowed", env: good, want: func(e *Expect) { e.Builders = []string{"https://ci.example/builder"} }, rule: rules.ProvenanceBuilder,
			evidence: "expected https://ci.example/builder, found " + testBuilder},
		{name: "other commit", env: good, want: func(e *Expect) { e.Build.Revision = strings.Repeat("f", 40) }, rule: rules.ProvenanceSource,
			evidence: "found " + testCommit},
		{name: "other repository", env: good, want: func(e *Expect) { e.Build.Module, e.Build.Path = "github.com/evil/agent", "github.com/evil/agent" },
			rule: rules.ProvenanceSource, evidence: "found git+https://github.com/example/agent"},
		{name: "no revision", env: good, want: func(e *Expect) { e.Build.Revision = "" }, rule: rules.ProvenanceSource},
		{name: "dirty tree", env: good, want: func(e *Expect) { e.Build.Modified = true }, rule: rules.ProvenanceDirty},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := Expect{Digest: testDigest, Build: cleanBuild()}
			if c.want != nil {
				c.want(&want)
			}
			k := key
			if c.key != nil {
				k = c.key
			}
			a, err := Check(c.env, Trust{Key: verifierOf(t, k)}, want)
			var pe *Error
			switch {
			case c.rule == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.rule == "":
				if a.Builder != testBuilder || a.Commit != testCommit || a.Repository != "git+https://github.com/example/agent" || !strings.HasPrefix(a.Digest, "sha256:") {
					t.Fatalf("attested %+v", a)
				}
			case !errors.As(err, &pe) || pe.Rule != c.rule || !errors.Is(err, ErrRefused):
				t.Fatalf("got %v, want rule %s", err, c.rule)
			case !strings.Contains(err.Error(), c.evidence):
				t.Fatalf("%v: want evidence %q", err, c.evidence)
			}
		})
	}
}

// TestDSSEVector: the DSSE protocol's own test vector (testdata, with
// its source): its PAE, and its envelope, signed raw r||s, verifies
// under its key; changed by a byte, it does not.
func TestDSSEVector(t *testing.T) {
	b, err := os.ReadFile("testdata/dsse_pae_vector.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		PayloadType string        `json:"payloadType"`
		Payload     string        `json:"payload_utf8"`
		PAE         string        `json:"pae_utf8"`
		Envelope    dsse.Envelope `json:"envelope"`
	}
	var raw struct {
		Key struct {
			X string `json:"x_dec"`
			Y string `json:"y_dec"`
		} `json:"key"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &raw)
	if got := string(dsse.PAE(v.PayloadType, []byte(v.Payload))); got != v.PAE {
		t.Fatalf("PAE %q, want %q", got, v.PAE)
	}
	x, _ := new(big.Int).SetString(raw.Key.X, 10)
	y, _ := new(big.Int).SetString(raw.Key.Y, 10)
	point := append([]byte{4}, append(x.FillBytes(make([]byte, 32)), y.FillBytes(make([]byte, 32))...)...)
	pk, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := cryptoutils.MarshalPublicKeyToPEM(pk)
	if err != nil {
		t.Fatal(err)
	}
	ver, err := LoadKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := dsse.NewEnvelopeVerifier(dsseKey{ver})
	if _, err := ev.Verify(t.Context(), &v.Envelope); err != nil {
		t.Fatalf("the vector's envelope: %v", err)
	}
	v.Envelope.Payload = base64.StdEncoding.EncodeToString([]byte("hello worle"))
	if _, err := ev.Verify(t.Context(), &v.Envelope); err == nil {
		t.Fatal("a changed payload verified")
	}
}

// TestCheckPin: a pin's recorded provenance is checked again whole: the
// attestation against the pin's digest and build, and what the pin says
// of it against what it attests.
func TestCheckPin(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	env := envelope(t, key, PayloadType, testStatement(nil))
	a, err := Check(env, Trust{Key: verifierOf(t, key)}, Expect{Digest: testDigest, Build: cleanBuild()})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Record(env, Trust{Key: verifierOf(t, key)}, a)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(*schemas.Pin)
		rule string
	}{
		{"as recorded", nil, ""},
		{"another builder recorded", func(p *schemas.Pin) { p.Provenance.Builder = "https://ci.example/b" }, rules.ProvenanceMalformed},
		{"another commit recorded", func(p *schemas.Pin) { p.Provenance.Commit = strings.Repeat("a", 40) }, rules.ProvenanceMalformed},
		{"another binary pinned", func(p *schemas.Pin) { p.Digest = "sha256:" + strings.Repeat("1", 64) }, rules.ProvenanceSubject},
		{"another key recorded", func(p *schemas.Pin) { p.Provenance.Key = mustPKIX(t) }, rules.ProvenanceSignature},
		{"no key", func(p *schemas.Pin) { p.Provenance.Key = []byte{1} }, rules.ProvenanceMalformed},
	} {
		p := &schemas.Pin{Digest: testDigest, Build: cleanBuild(), Provenance: &schemas.Provenance{
			Envelope: rec.Envelope, Key: rec.Key, Builder: rec.Builder, Repository: rec.Repository, Commit: rec.Commit}}
		if c.edit != nil {
			c.edit(p)
		}
		var pe *Error
		if err := CheckPin(p); (c.rule == "") != (err == nil) || (err != nil && (!errors.As(err, &pe) || pe.Rule != c.rule)) {
			t.Errorf("%s: %v, want rule %q", c.name, err, c.rule)
		}
	}
}

func mustPKIX(t *testing.T) []byte {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return der
}
