package provenance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
)

// BundleMediaTypePrefix starts the mediaType of every Sigstore bundle
// (application/vnd.dev.sigstore.bundle+json;version=0.1 to 0.3, and
// application/vnd.dev.sigstore.bundle.v0.3+json).
const BundleMediaTypePrefix = "application/vnd.dev.sigstore.bundle"

// MaxTrustedRootSize bounds a Sigstore trusted root, in bytes.
const MaxTrustedRootSize = 64 << 10

// isBundle reports whether an attestation file is a Sigstore bundle (a
// JSON object whose mediaType names one) rather than a bare DSSE
// envelope.
func isBundle(data []byte) bool {
	var probe struct {
		MediaType string `json:"mediaType"`
	}
	return json.Unmarshal(data, &probe) == nil && strings.HasPrefix(probe.MediaType, BundleMediaTypePrefix)
}

// signer is who a verified bundle says signed it: for a certificate,
// its OIDC issuer and subject (SAN), and the source repository its
// extension names (Fulcio's 1.3.6.1.4.1.57264.1.12, set for CI
// identities such as GitHub Actions'; "" when absent); empty under a key.
type signer struct{ issuer, identity, repository string }

// openBundle verifies a Sigstore bundle holding a DSSE envelope, offline
// (sigstore-go): under trust.Key, or under trust.Root, a trusted root,
// whose certificate authority must have issued the signing certificate
// at a time the bundle proves (an entry of a transparency log the root
// lists, with its inclusion proof or promise, or a timestamp of an
// authority it lists), with a certificate transparency timestamp when
// the root lists CT logs. The statement's subject is checked afterwards
// by Check, with its evidence. It returns the envelope's payload and the
// signer.
func openBundle(data []byte, trust Trust) ([]byte, signer, error) {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return nil, signer{}, refuse(rules.ProvenanceMalformed, fmt.Sprintf("not a Sigstore bundle: %v", err), "", "")
	}
	env, err := b.Envelope()
	if err != nil || env == nil {
		return nil, signer{}, refuse(rules.ProvenanceMalformed, "the Sigstore bundle holds no DSSE envelope (an attestation), only a message signature", "", "")
	}
	if env.PayloadType != PayloadType {
		return nil, signer{}, refuse(rules.ProvenanceMalformed, "the envelope's payloadType", PayloadType, env.PayloadType)
	}
	v, policy, err := bundleVerifier(trust)
	if err != nil {
		return nil, signer{}, err
	}
	res, err := v.Verify(&b, policy)
	if err != nil {
		return nil, signer{}, refuse(rules.ProvenanceSignature, fmt.Sprintf("the Sigstore bundle does not verify under the %s given (%v)", trust.kind(), err), "", "")
	}
	var s signer
	if c := res.Signature.Certificate; c != nil {
		s = signer{issuer: c.Extensions.Issuer, identity: c.SubjectAlternativeName, repository: c.Extensions.SourceRepositoryURI}
	}
	payload, err := env.DecodeB64Payload()
	if err != nil {
		return nil, signer{}, refuse(rules.ProvenanceMalformed, fmt.Sprintf("the envelope's payload is not base64: %v", err), "", "")
	}
	return payload, s, nil
}

// bundleVerifier is sigstore-go's verifier for trust, with its policy:
// any artifact (Check compares the subject itself, to say what it found)
// and any identity (the pin records it, and a delegation's builders bind
// it).
func bundleVerifier(trust Trust) (*verify.Verifier, verify.PolicyBuilder, error) {
	anyArtifact := verify.WithoutArtifactUnsafe()
	if trust.Key != nil {
		keys := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
			return root.NewExpiringKey(trust.Key, timeZero, timeZero), nil
		})
		v, err := verify.NewVerifier(keys, verify.WithNoObserverTimestamps())
		return v, verify.NewPolicy(anyArtifact, verify.WithKey()), err
	}
	tr, err := root.NewTrustedRootFromJSON(trust.Root)
	if err != nil {
		return nil, verify.PolicyBuilder{}, refuse(rules.ProvenanceMalformed, fmt.Sprintf("the Sigstore trusted root: %v", err), "", "")
	}
	opts := []verify.VerifierOption{verify.WithObserverTimestamps(1)}
	if len(tr.RekorLogs()) > 0 {
		opts = append(opts, verify.WithTransparencyLog(1))
	}
	if len(tr.CTLogs()) > 0 {
		opts = append(opts, verify.WithSignedCertificateTimestamps(1))
	}
	v, err := verify.NewVerifier(tr, opts...)
	return v, verify.NewPolicy(anyArtifact, verify.WithoutIdentitiesUnsafe()), err
}

// Trust is what an attestation's signature is checked under: a public
// key (Key), or, for a Sigstore bundle signed with a short-lived
// certificate, a Sigstore trusted root (Root, its JSON, as
// trusted_root.json: the certificate authorities, transparency logs and
// timestamp authorities). Exactly one is set.
type Trust struct {
	Key  signature.Verifier
	Root []byte
}

func (t Trust) kind() string {
	if t.Key != nil {
		return "key"
	}
	return "trusted root"
}

// anchor is the digest that names the trust in a delegation's builders:
// the key's (KeyDigest of its PKIX DER) or the trusted root's (the
// SHA-256 of its bytes as given).
func (t Trust) anchor() string {
	if t.Key != nil {
		return keyDigest(t.Key)
	}
	return schemas.SHA256Digest(t.Root)
}

// openDSSE verifies a bare DSSE envelope under key and returns its
// payload.
func openDSSE(envelope []byte, key signature.Verifier) ([]byte, error) {
	var env dsse.Envelope
	dec := json.NewDecoder(bytes.NewReader(envelope))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil || dec.More() {
		return nil, refuse(rules.ProvenanceMalformed, fmt.Sprintf("not a DSSE envelope (JSON: payloadType, payload, signatures) nor a Sigstore bundle: %v", err), "", "")
	}
	if env.PayloadType != PayloadType {
		return nil, refuse(rules.ProvenanceMalformed, "the envelope's payloadType", PayloadType, env.PayloadType)
	}
	if key == nil {
		return nil, refuse(rules.ProvenanceSignature, "a bare DSSE envelope is checked under a key; a trusted root checks only a Sigstore bundle", "", "")
	}
	ev, err := dsse.NewEnvelopeVerifier(dsseKey{key})
	if err != nil {
		return nil, err
	}
	if _, err := ev.Verify(ctx, &env); err != nil {
		return nil, refuse(rules.ProvenanceSignature, fmt.Sprintf("no signature of the envelope verifies under the key given (%v)", err), "", "")
	}
	payload, err := env.DecodeB64Payload()
	if err != nil {
		return nil, refuse(rules.ProvenanceMalformed, fmt.Sprintf("the envelope's payload is not base64: %v", err), "", "")
	}
	return payload, nil
}
