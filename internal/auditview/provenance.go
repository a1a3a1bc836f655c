package auditview

import (
	"fmt"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/verify/audit"
	"github.com/writ-ledger/writ/verify/audit/builtby"
)

// provenanceLines are the text report's lines on who built what the
// authority log pins: the pins with build provenance (builder, what
// vouches for it, source) and the admissions that relied on it. Text from
// the ledger is escaped.
func provenanceLines(rep *audit.Report) []string {
	p := rep.Provenance
	if p == nil {
		return nil
	}
	lines := []string{
		fmt.Sprintf("pins with build provenance: %d, without: %d", p.PinsWith, p.PinsWithout),
		fmt.Sprintf("admissions that ran a binary pinned with provenance: %d, without: %d", p.AdmittedRelying, p.AdmittedWithout),
	}
	if len(p.Pins) > 0 {
		lines = append(lines, "built by"+listedText(len(p.Pins), p.PinsWith)+":")
	}
	for _, x := range p.Pins {
		lines = append(lines, humanize.OneLine(fmt.Sprintf("  entry %d %s %s %s %s built by %s (%s) from %s at %s",
			x.Index, x.Artifact, x.Version, x.Platform, x.Digest, x.Builder, signedBy(x), orNone(x.Repository), x.Commit)))
	}
	return lines
}

// signedBy names what vouched for a pin's provenance: a key, or a
// certificate under a trusted root.
func signedBy(x builtby.Pin) string {
	if x.Identity != "" {
		return fmt.Sprintf("certificate of %s from %s, trusted root %s", x.Identity, x.Issuer, x.BuilderKey)
	}
	return "key " + x.BuilderKey
}

func orNone(s string) string {
	if s == "" {
		return "an unnamed repository"
	}
	return s
}
