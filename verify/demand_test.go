package verify_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/transfer"
	"github.com/writ-ledger/writ/verify"
)

// attestedPin pins the fixture's agent at version with a provenance
// from builder signed by key.
func attestedPin(t *testing.T, f *fixture, version string, key *ecdsa.PrivateKey, builder string) *schemas.Pin {
	t.Helper()
	in, err := transfer.Inspect(f.agent, "sha256")
	if err != nil {
		t.Fatal(err)
	}
	env, err := testkit.Provenance(key, in.Digest, in.Build.Revision, builder)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := cryptoutils.MarshalPublicKeyToPEM(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	p, err := transfer.NewPin(f.agent, transfer.PinOptions{Artifact: "agent", Version: version, Platform: platform,
		IssuedAt: testkit.Epoch.Add(-time.Hour), Expires: testkit.Epoch.Add(30 * 24 * time.Hour), Provenance: env, ProvenanceKey: pub})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAdmitProvenanceDemand: an instruct delegation that lists builders
// demands that the binaries its instructions run be pinned with
// provenance from one of them: a pin without provenance, or with one
// naming the builder but signed by another key, is provenance-required
// (governed: admitted, would-refuse, refused); a pin from the builder is
// admitted; an instruction under a delegation without the demand runs
// the same binaries.
func TestAdmitProvenanceDemand(t *testing.T) {
	const builder = "https://ci.example/release"
	bk, other := mustECDSA(t), mustECDSA(t)
	der, err := x509.MarshalPKIXPublicKey(&bk.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	strict := testkit.Key(t, 30)
	demand := testkit.Delegation(strict, []string{"instruct"}, "demo", "runner-*")
	demand.Builders = []schemas.Builder{{ID: builder, Key: schemas.SHA256Digest(der)}}
	rel := testkit.Key(t, 11) // the fixture's release engineer
	for _, tc := range []struct {
		name     string
		pin      func(*fixture) *schemas.Pin
		signer   func(*fixture) bool // true: the strict operator signs
		rule     string
		verdicts [3]schemas.Verdict
	}{
		{"a pin without provenance", nil, nil, rules.ProvenanceRequired, softAll},
		{"a pin of the builder's, signed by another key", func(f *fixture) *schemas.Pin { return attestedPin(t, f, "1.0.1", other, builder) }, nil,
			rules.ProvenanceRequired, softAll},
		{"a pin from another builder", func(f *fixture) *schemas.Pin { return attestedPin(t, f, "1.0.1", bk, "https://ci.example/other") }, nil,
			rules.ProvenanceRequired, softAll},
		{"a pin from the builder", func(f *fixture) *schemas.Pin { return attestedPin(t, f, "1.0.1", bk, builder) }, nil,
			rules.OK, [3]schemas.Verdict{"admitted", "admitted", "admitted"}},
		{"no demand on the other operator", nil, func(*fixture) bool { return false }, rules.OK, [3]schemas.Verdict{"admitted", "admitted", "admitted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil, nil, nil)
			entries := [][]byte{testkit.Seal(t, demand, f.root)}
			if tc.pin != nil {
				entries = append(entries, testkit.Seal(t, tc.pin(f), rel))
			}
			st := f.extend(t, entries...)
			key := strict
			if tc.signer != nil && !tc.signer(f) {
				key = f.op
			}
			raw := testkit.Seal(t, instr(nil), key)
			for i, mode := range []verify.Mode{verify.ModeOff, verify.ModeWarn, verify.ModeEnforce} {
				v := verify.Admit(st, cfg(mode), verify.Dispatch{Raw: raw, AgentBinary: f.agent})
				if v.Rule != tc.rule || v.Verdict != tc.verdicts[i] {
					t.Fatalf("mode %s: %s / %s (%s), want %s / %s", mode, v.Verdict, v.Rule, v.Reason, tc.verdicts[i], tc.rule)
				}
			}
			if tc.rule != rules.OK {
				assertedRule(tc.rule)
			}
		})
	}
}

func mustECDSA(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
