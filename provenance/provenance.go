// Package provenance checks, offline, that a build provenance
// attestation vouches for a Go binary a release engineer pins: a DSSE
// envelope (github.com/secure-systems-lab/dsse, as cosign attest-blob and
// the SLSA GitHub generator write it) signed by the key given, holding an
// in-toto Statement v1 (in-toto/attestation) whose subject is the
// binary's SHA-256 digest and whose predicate is SLSA provenance v1
// (slsa.dev/provenance/v1), built by an allowed builder, from the source
// commit the binary itself records (debug/buildinfo's vcs.revision, and
// the repository its module path names, where it names one), from a
// clean tree. Every refusal is an *Error with a rule id (package rules)
// and what was expected and found. Nothing here opens a socket.
package provenance

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/x509"
	"math/big"
	"time"

	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/crypto/cryptobyte"
	"golang.org/x/crypto/cryptobyte/asn1"

	prov "github.com/in-toto/attestation/go/predicates/provenance/v1"
	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"google.golang.org/protobuf/encoding/protojson"
)

// MaxEnvelopeSize bounds an attestation, in bytes: what a pin can
// record (schemas.MaxProvenanceEnvelope; a ledger entry is at most
// schemas.MaxRecordSize).
const MaxEnvelopeSize = schemas.MaxProvenanceEnvelope

// The media and predicate types this package takes.
const (
	PayloadType   = "application/vnd.in-toto+json"
	PredicateType = "https://slsa.dev/provenance/v1"
)

// Error is a refusal: its rule (rules.Provenance*), what is wrong, and
// the evidence, expected and found ("" when none applies).
type Error struct {
	Rule            string
	Reason          string
	Expected, Found string
}

func (e *Error) Error() string {
	s := "provenance: " + e.Reason
	if e.Expected != "" || e.Found != "" {
		s += fmt.Sprintf(": expected %s, found %s", e.Expected, e.Found)
	}
	return s + " (" + e.Rule + ")"
}

// RuleID returns the refusal's rule id.
func (e *Error) RuleID() string { return e.Rule }

// ErrRefused is wrapped by every *Error.
var ErrRefused = errors.New("the provenance does not vouch for the binary")

// Unwrap returns ErrRefused.
func (e *Error) Unwrap() error { return ErrRefused }

func refuse(rule, reason, expected, found string) *Error {
	return &Error{Rule: rule, Reason: reason, Expected: expected, Found: found}
}

// Attested is what a provenance said of the binary, once it vouched for
// it (the pin's record of it).
type Attested struct {
	// Digest is the SHA-256 of the envelope's bytes as given
	// ("sha256:" and 64 hex digits).
	Digest string `json:"digest" doc:"SHA-256 of the attestation envelope as given (sha256:hex)"`
	// Builder is the builder id (runDetails.builder.id).
	Builder string `json:"builder" doc:"the builder id the provenance names (runDetails.builder.id)"`
	// Key is the digest of what the signature was checked under (the
	// key's KeyDigest, or the SHA-256 of the Sigstore trusted root),
	// which a delegation's builders bind the builder id to.
	Key string `json:"key" doc:"the digest of the key that signed the provenance (sha256:hex of its PKIX DER), or of the Sigstore trusted root it was checked under, as writ delegate --builder takes it"`
	// Issuer and Identity are the signing certificate's OIDC issuer and
	// subject (SAN), for a Sigstore bundle checked under a trusted root
	// ("" under a key).
	Issuer   string `json:"issuer,omitempty" doc:"the signing certificate's OIDC issuer (a Sigstore bundle checked under a trusted root)"`
	Identity string `json:"identity,omitempty" doc:"the signing certificate's subject (SAN), e.g. the builder's workflow (a Sigstore bundle checked under a trusted root)"`
	// BuildType is buildDefinition.buildType.
	BuildType string `json:"build_type" doc:"the provenance's buildDefinition.buildType"`
	// Repository and Commit are the source the provenance names: the
	// git URI of the dependency whose gitCommit digest it gives, and
	// that commit.
	Repository string `json:"repository" doc:"the source repository the provenance names (git URI, without the ref)"`
	Commit     string `json:"commit" doc:"the source commit the provenance names (gitCommit)"`
}

// Expect is what the binary itself says, and which builders may have
// built it.
type Expect struct {
	// Digest is the binary's "sha256:<hex>" digest.
	Digest string
	// Build is the binary's Go build metadata (nil: it records none).
	Build *schemas.Build
	// Builders are the builder ids allowed; empty allows any (the pin
	// records the one found).
	Builders []string
}

// LoadKey parses a PEM public key (PKIX: ECDSA, Ed25519 or RSA, as
// cosign generate-key-pair writes it) as a verifier of DSSE signatures
// (SHA-256 for ECDSA and RSA). Errors: a malformed key, naming why.
func LoadKey(pemBytes []byte) (signature.Verifier, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemBytes)
	if err != nil {
		return nil, fmt.Errorf("the provenance key: %w", err)
	}
	return signature.LoadVerifier(pub, crypto.SHA256)
}

var ctx = context.Background()

var timeZero time.Time

// keyDigest is KeyDigest of a verifier's public key ("" when it has
// none that marshals).
func keyDigest(key signature.Verifier) string {
	pub, err := key.PublicKey()
	if err != nil {
		return ""
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return ""
	}
	return schemas.SHA256Digest(der)
}

// KeyDigest is the digest that names a provenance key in a delegation's
// builders (schemas.Builder.Key): schemas.SHA256Digest of the PEM
// public key's PKIX DER. Errors: a malformed key.
func KeyDigest(pemBytes []byte) (string, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemBytes)
	if err != nil {
		return "", fmt.Errorf("not a PEM public key: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("the public key: %w", err)
	}
	return schemas.SHA256Digest(der), nil
}

// Check verifies an attestation and checks its statement against
// want: a bare DSSE envelope under trust.Key, or a Sigstore bundle
// (openBundle) under trust.Key or trust.Root. In order: the signature
// (rules.ProvenanceSignature), the statement and predicate
// (rules.ProvenanceMalformed), the subject (rules.ProvenanceSubject),
// the builder (rules.ProvenanceBuilder), the source commit and
// repository (rules.ProvenanceSource) and a clean tree
// (rules.ProvenanceDirty). It returns what the provenance says, or an
// *Error. Nothing here opens a socket or reads the clock.
func Check(attestation []byte, trust Trust, want Expect) (*Attested, error) {
	if len(attestation) > MaxEnvelopeSize {
		return nil, refuse(rules.ProvenanceMalformed, fmt.Sprintf("the attestation is %d bytes, over the %d a pin records (a ledger entry is at most %d)", len(attestation), MaxEnvelopeSize, schemas.MaxRecordSize), "", "")
	}
	if (trust.Key == nil) == (trust.Root == nil) {
		return nil, refuse(rules.ProvenanceSignature, "an attestation is checked under a key or a trusted root, one of them", "", "")
	}
	var payload []byte
	var who signer
	var err error
	if isBundle(attestation) {
		payload, who, err = openBundle(attestation, trust)
	} else {
		payload, err = openDSSE(attestation, trust.Key)
	}
	if err != nil {
		return nil, err
	}
	st, err := statement(payload)
	if err != nil {
		return nil, err
	}
	p, err := predicate(st)
	if err != nil {
		return nil, err
	}
	a := &Attested{Digest: schemas.SHA256Digest(attestation), Builder: p.GetRunDetails().GetBuilder().GetId(),
		BuildType: p.GetBuildDefinition().GetBuildType(), Key: trust.anchor(), Issuer: who.issuer, Identity: who.identity}
	a.Repository, a.Commit = source(p)
	if who.repository != "" && schemas.RepoPath(who.repository) != schemas.RepoPath(a.Repository) {
		return nil, refuse(rules.ProvenanceSource, "the provenance names another repository than the one its signing certificate says ran the build", who.repository, a.Repository)
	}
	if a.Builder == "" {
		return nil, refuse(rules.ProvenanceMalformed, "the provenance names no builder (runDetails.builder.id)", "", "")
	}
	if err := subject(st, want.Digest); err != nil {
		return nil, err
	}
	if len(want.Builders) > 0 && !slices.Contains(want.Builders, a.Builder) {
		return nil, refuse(rules.ProvenanceBuilder, "the builder is not one the pin allows", strings.Join(want.Builders, " or "), a.Builder)
	}
	if err := sameSource(a, want.Build); err != nil {
		return nil, err
	}
	if want.Build.Modified {
		return nil, refuse(rules.ProvenanceDirty, "the binary records a modified tree (vcs.modified)", "false", "true")
	}
	return a, nil
}

// StatementV01 is the in-toto Statement type before v1, which the SLSA
// GitHub generator still writes around an SLSA provenance v1 predicate;
// its layout is v1's.
const StatementV01 = "https://in-toto.io/Statement/v0.1"

// statement parses an in-toto statement, strictly: v1, or v0.1 (read
// as v1, whose fields it has).
func statement(payload []byte) (*intoto.Statement, error) {
	var st intoto.Statement
	if err := protojson.Unmarshal(payload, &st); err != nil {
		return nil, refuse(rules.ProvenanceMalformed, fmt.Sprintf("the payload is not an in-toto statement: %v", err), "", "")
	}
	if st.GetType() == StatementV01 {
		st.Type = intoto.StatementTypeUri
	}
	if err := st.Validate(); err != nil {
		return nil, refuse(rules.ProvenanceMalformed, fmt.Sprintf("the in-toto statement: %v", err), "", "")
	}
	return &st, nil
}

// predicate parses the statement's SLSA provenance v1 predicate.
func predicate(st *intoto.Statement) (*prov.Provenance, error) {
	if st.GetPredicateType() != PredicateType {
		return nil, refuse(rules.ProvenanceMalformed, "the statement's predicateType", PredicateType, st.GetPredicateType())
	}
	raw, err := protojson.Marshal(st.GetPredicate())
	if err != nil {
		return nil, refuse(rules.ProvenanceMalformed, fmt.Sprintf("the predicate: %v", err), "", "")
	}
	var p prov.Provenance
	if err := protojson.Unmarshal(raw, &p); err != nil {
		return nil, refuse(rules.ProvenanceMalformed, fmt.Sprintf("the predicate is not SLSA provenance v1: %v", err), "", "")
	}
	if err := p.Validate(); err != nil {
		return nil, refuse(rules.ProvenanceMalformed, fmt.Sprintf("the SLSA provenance: %v", err), "", "")
	}
	return &p, nil
}

// subject checks that a subject of st has the binary's SHA-256.
func subject(st *intoto.Statement, digest string) error {
	want := strings.TrimPrefix(digest, "sha256:")
	var found []string
	for _, s := range st.GetSubject() {
		got := s.GetDigest()["sha256"]
		if strings.EqualFold(got, want) {
			return nil
		}
		found = append(found, s.GetName()+" sha256:"+got)
	}
	return refuse(rules.ProvenanceSubject, "no subject is the pinned binary", digest, strings.Join(found, ", "))
}

// dsseKey adapts a sigstore verifier to DSSE's: any key id.
type dsseKey struct{ v signature.Verifier }

// Verify checks sig over data; an ECDSA signature may be ASN.1 DER (as
// cosign writes it) or the raw r||s of DSSE's own test vectors.
func (k dsseKey) Verify(_ context.Context, data, sig []byte) error {
	err := k.v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(data))
	if pub, ok := k.Public().(*ecdsa.PublicKey); ok && err != nil {
		n := (pub.Curve.Params().BitSize + 7) / 8
		if len(sig) == 2*n {
			var b cryptobyte.Builder
			b.AddASN1(asn1.SEQUENCE, func(b *cryptobyte.Builder) {
				b.AddASN1BigInt(new(big.Int).SetBytes(sig[:n]))
				b.AddASN1BigInt(new(big.Int).SetBytes(sig[n:]))
			})
			if der, derr := b.Bytes(); derr == nil {
				err = k.v.VerifySignature(bytes.NewReader(der), bytes.NewReader(data))
			}
		}
	}
	return err
}

func (k dsseKey) KeyID() (string, error) { return "", nil }

func (k dsseKey) Public() crypto.PublicKey {
	pub, _ := k.v.PublicKey()
	return pub
}

// Record is what a pin records of a provenance that vouched for its
// binary (schemas.Provenance): the attestation as given, the key as PKIX
// DER or the trusted root as given, and what it attested. Errors: a key
// that does not marshal.
func Record(attestation []byte, trust Trust, a *Attested) (*schemas.Provenance, error) {
	r := &schemas.Provenance{Envelope: attestation, TrustedRoot: trust.Root, Builder: a.Builder, Repository: a.Repository,
		Commit: a.Commit, Issuer: a.Issuer, Identity: a.Identity}
	if trust.Key != nil {
		pub, err := trust.Key.PublicKey()
		if err == nil {
			r.Key, err = x509.MarshalPKIXPublicKey(pub)
		}
		if err != nil {
			return nil, fmt.Errorf("the provenance key: %w", err)
		}
	}
	return r, nil
}

// CheckPin checks a pin's recorded provenance again, as every reader of
// the log does (nil when the pin has none): the attestation verifies
// under the recorded key or trusted root and vouches for the pin's
// digest and build metadata (Check), and says what the pin records of
// it, builder, source repository and commit, signer
// (rules.ProvenanceMalformed otherwise). Errors: an *Error.
func CheckPin(p *schemas.Pin) error {
	r := p.Provenance
	if r == nil {
		return nil
	}
	trust := Trust{Root: r.TrustedRoot}
	if r.Key != nil {
		pub, err := x509.ParsePKIXPublicKey(r.Key)
		if err != nil {
			return refuse(rules.ProvenanceMalformed, fmt.Sprintf("the pin's provenance key is not a PKIX public key: %v", err), "", "")
		}
		if trust.Key, err = signature.LoadVerifier(pub, crypto.SHA256); err != nil {
			return refuse(rules.ProvenanceMalformed, fmt.Sprintf("the pin's provenance key: %v", err), "", "")
		}
	}
	a, err := Check(r.Envelope, trust, Expect{Digest: p.Digest, Build: p.Build})
	if err != nil {
		return err
	}
	for _, f := range [][3]string{{"builder", a.Builder, r.Builder}, {"repository", a.Repository, r.Repository}, {"commit", a.Commit, r.Commit},
		{"issuer", a.Issuer, r.Issuer}, {"identity", a.Identity, r.Identity}} {
		if f[1] != f[2] {
			return refuse(rules.ProvenanceMalformed, "the pin records another "+f[0]+" than its attestation says", f[1], f[2])
		}
	}
	return nil
}
