package verify

import (
	"github.com/writ-ledger/writ/schemas"
)

// Decision returns the decision record for v. It carries the verdict,
// rule, mode, instruction id and digest, signer key id, machine, stream,
// the digests compared and the checks that passed and failed; never the
// brief, the reasons' free text, a secret, or a URL.
func Decision(v *Verdict) *schemas.Decision {
	d := &schemas.Decision{
		V: schemas.SchemaVersion, Time: v.Time.Unix(), Machine: v.Machine, Mode: string(v.Mode),
		Verdict: v.Verdict, Rule: v.Rule, InstructionID: v.InstructionID, InstructionDigest: v.InstructionDigest,
		Signer: v.Signer, Stream: v.Stream, Compared: v.Compared, Passed: v.Passed,
		AuthoritySize: v.AuthoritySize, AuthorityRoot: v.AuthorityRoot, HighWater: v.HighWater,
	}
	if v.Admitted() {
		d.Claim = v.Claim // only an admitted instruction holds or releases a claim
	}
	seen := map[string]bool{}
	for _, f := range v.Failed {
		if !seen[f.Rule] { // each failed rule once, in check order
			seen[f.Rule] = true
			d.Failed = append(d.Failed, f.Rule)
		}
	}
	return d
}

// AdmittedID returns the instruction id decision d admitted, or "" when
// it admitted none (a refusal, or a dispatch that never parsed): the one
// definition replay protection, the runner's index and the audit share.
func AdmittedID(d *schemas.Decision) string {
	if d.Verdict == Refused {
		return ""
	}
	return d.InstructionID
}
