package builtby

import (
	"strings"
	"testing"

	"github.com/writ-ledger/writ/schemas"
)

// TestReport: pins with and without provenance are counted and the
// first MaxListed listed with their builder and signer; an admission
// counts as relying when it compared a digest pinned with provenance, a
// refusal not at all; a runner's copy counts its own admissions.
func TestReport(t *testing.T) {
	d := func(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }
	r := New()
	r.AddPin(3, &schemas.Pin{Artifact: "agent", Version: "v1.0.0", Platform: "linux/amd64", Digest: d('a'),
		Provenance: &schemas.Provenance{Key: []byte{1, 2}, Builder: "https://ci.example/b", Repository: "git+https://example.com/agent", Commit: strings.Repeat("c", 40)}})
	r.AddPin(4, &schemas.Pin{Artifact: "agent", Version: "v1.0.1", Digest: d('b')})
	for i := range MaxListed {
		r.AddPin(int64(10+i), &schemas.Pin{Artifact: "engine", Digest: d('e'), Provenance: &schemas.Provenance{TrustedRoot: []byte("{}"), Builder: "b", Issuer: "i", Identity: "id"}})
	}
	for _, dec := range []*schemas.Decision{
		{Verdict: schemas.VerdictAdmitted, Compared: []schemas.DigestCheck{{Subject: "agent", Expected: d('a'), Actual: d('a')}}},
		{Verdict: schemas.VerdictAdmitted, Compared: []schemas.DigestCheck{{Subject: "agent", Expected: d('b'), Actual: d('b')}}},
		{Verdict: schemas.VerdictAdmittedUnsigned, Compared: []schemas.DigestCheck{{Subject: "agent", Expected: d('b')}, {Subject: "engine", Expected: d('e')}}},
		{Verdict: schemas.VerdictRefused, Compared: []schemas.DigestCheck{{Subject: "agent", Expected: d('a'), Actual: d('f')}}},
		{Verdict: schemas.VerdictWouldRefuse},
	} {
		r.AddDecision(dec)
	}
	if r.PinsWith != MaxListed+1 || r.PinsWithout != 1 || len(r.Pins) != MaxListed || r.AdmittedRelying != 2 || r.AdmittedWithout != 2 {
		t.Fatalf("with %d without %d listed %d relying %d without %d", r.PinsWith, r.PinsWithout, len(r.Pins), r.AdmittedRelying, r.AdmittedWithout)
	}
	if p := r.Pins[0]; p.Index != 3 || p.Builder != "https://ci.example/b" || p.BuilderKey != schemas.SHA256Digest([]byte{1, 2}) || p.Identity != "" {
		t.Fatalf("first pin %+v", p)
	}
	if p := r.Pins[1]; p.Identity != "id" || p.Issuer != "i" || p.BuilderKey != schemas.SHA256Digest([]byte("{}")) {
		t.Fatalf("keyless pin %+v", p)
	}
	c := r.ForRunner()
	c.AddDecision(&schemas.Decision{Verdict: schemas.VerdictAdmitted, Compared: []schemas.DigestCheck{{Expected: d('a')}}})
	if c.AdmittedRelying != 1 || r.AdmittedRelying != 2 || c.PinsWith != r.PinsWith {
		t.Fatalf("runner copy: %d, fleet: %d", c.AdmittedRelying, r.AdmittedRelying)
	}
}
