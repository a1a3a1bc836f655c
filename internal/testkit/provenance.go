package testkit

import (
	"crypto"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Provenance returns a DSSE envelope, signed by key (ASN.1 ECDSA, as
// cosign signs), of an in-toto Statement v1 whose subject is a binary
// named agent with digest ("sha256:<hex>") and whose SLSA provenance v1
// predicate names builder, and the source commit in
// git+https://example.com/agent: what a builder's attestation of a test
// agent looks like.
func Provenance(key *ecdsa.PrivateKey, digest, commit, builder string) ([]byte, error) {
	st := map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": "agent", "digest": map[string]any{"sha256": strings.TrimPrefix(digest, "sha256:")}}},
		"predicateType": "https://slsa.dev/provenance/v1",
		"predicate": map[string]any{
			"buildDefinition": map[string]any{"buildType": "https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1",
				"externalParameters":   map[string]any{"workflow": map[string]any{"ref": "refs/heads/main", "repository": "https://example.com/agent"}},
				"resolvedDependencies": []any{map[string]any{"uri": "git+https://example.com/agent@refs/heads/main", "digest": map[string]any{"gitCommit": commit}}}},
			"runDetails": map[string]any{"builder": map[string]any{"id": builder}},
		},
	}
	payload, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	s, err := signature.LoadECDSASigner(key, crypto.SHA256)
	if err != nil {
		return nil, err
	}
	sig, err := s.SignMessage(strings.NewReader(string(dsse.PAE("application/vnd.in-toto+json", payload))))
	if err != nil {
		return nil, err
	}
	return json.Marshal(dsse.Envelope{PayloadType: "application/vnd.in-toto+json", Payload: base64.StdEncoding.EncodeToString(payload),
		Signatures: []dsse.Signature{{Sig: base64.StdEncoding.EncodeToString(sig)}}})
}
