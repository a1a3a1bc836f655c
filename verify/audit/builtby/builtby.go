// Package builtby tallies, for an audit, who built what the authority
// log pins: each pin's build provenance (its builder, what vouches for
// it, and the source it was built from; package provenance checked it
// when the replay applied the pin) and how many admissions ran a binary
// whose pin carries one. Memory: one digest per pin with provenance,
// and at most MaxListed pins listed.
package builtby

import (
	"github.com/writ-ledger/writ/schemas"
)

// MaxListed bounds Report.Pins.
const MaxListed = 1000

// Pin is a pin of the authority log that carries build provenance.
type Pin struct {
	Index      int64  `json:"index" doc:"the pin's index in the authority log"`
	Artifact   string `json:"artifact" doc:"the artifact pinned"`
	Version    string `json:"version" doc:"its version"`
	Platform   string `json:"platform" doc:"GOOS/GOARCH"`
	Digest     string `json:"digest" doc:"the binary's digest, sha256:hex"`
	Builder    string `json:"builder" doc:"the builder id the provenance names"`
	BuilderKey string `json:"builder_key" doc:"the digest of the key that signed the provenance, or of the Sigstore trusted root it was checked under"`
	Issuer     string `json:"issuer,omitempty" doc:"keyless: the signing certificate's OIDC issuer"`
	Identity   string `json:"identity,omitempty" doc:"keyless: the signing certificate's subject (SAN)"`
	Repository string `json:"repository" doc:"the source repository it names (\"\" when none)"`
	Commit     string `json:"commit" doc:"the source commit it names, which the binary records"`
}

// Report is the provenance part of an audit.
type Report struct {
	// Pins are the pins with provenance, oldest first, at most
	// MaxListed (the first ones); PinsWith counts them all.
	Pins        []Pin `json:"pins" doc:"the pins that carry build provenance: index, artifact, version, platform, digest, builder, builder_key, issuer, identity, repository, commit (at most 1000)"`
	PinsWith    int64 `json:"pins_with_provenance" doc:"pins in the authority log that carry build provenance"`
	PinsWithout int64 `json:"pins_without_provenance" doc:"pins in the authority log that carry none"`
	// AdmittedRelying and AdmittedWithout count the admissions of the
	// period (any admitting verdict) that ran a binary pinned with
	// provenance (at least one of those they compared), and the others.
	// A decision names the digests it compared, not the pin it used: a
	// digest pinned at least once with provenance counts as relying.
	AdmittedRelying int64 `json:"admitted_relying_on_provenance" doc:"admissions in the period that ran a binary whose pin carries build provenance"`
	AdmittedWithout int64 `json:"admitted_without_provenance" doc:"admissions in the period whose binaries' pins carry none"`

	with map[string]bool
}

// New returns an empty Report.
func New() *Report { return &Report{Pins: []Pin{}, with: map[string]bool{}} }

// AddPin notes pin p, applied at authority log index i.
func (r *Report) AddPin(i int64, p *schemas.Pin) {
	if p.Provenance == nil {
		r.PinsWithout++
		return
	}
	r.PinsWith++
	r.with[p.Digest] = true
	if len(r.Pins) >= MaxListed {
		return
	}
	b := p.Builder()
	r.Pins = append(r.Pins, Pin{Index: i, Artifact: p.Artifact, Version: p.Version, Platform: p.Platform, Digest: p.Digest,
		Builder: b.ID, BuilderKey: b.Key, Issuer: b.Issuer, Identity: b.Identity, Repository: p.Provenance.Repository, Commit: p.Provenance.Commit})
}

// AddDecision counts decision d of the period when it admitted: relying
// on provenance when a binary it compared was pinned with provenance
// (its expected digest is such a pin's).
func (r *Report) AddDecision(d *schemas.Decision) {
	if d.Verdict == schemas.VerdictRefused {
		return
	}
	for _, c := range d.Compared {
		if r.with[c.Expected] {
			r.AdmittedRelying++
			return
		}
	}
	r.AdmittedWithout++
}

// ForRunner returns a copy of r, a fleet's authority tally, to count
// one runner's decisions in: its pins and counts of pins copied, its
// admission counts zero. The copies share r's digests, which only
// AddPin writes: add every pin to r before any ForRunner.
func (r *Report) ForRunner() *Report {
	c := *r
	c.Pins = append([]Pin{}, r.Pins...)
	c.AdmittedRelying, c.AdmittedWithout = 0, 0
	return &c
}
