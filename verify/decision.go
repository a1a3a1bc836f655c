package verify

import (
	"fmt"

	"github.com/writ-ledger/writ/ledger"
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
	}
	for _, f := range v.Failed {
		d.Failed = append(d.Failed, f.Rule)
	}
	return d
}

// Record appends v's decision record to the decision log and returns its
// index. The decision is durable when Record returns.
func Record(decisions *ledger.Log, v *Verdict) (int64, error) {
	b, err := schemas.Encode(Decision(v))
	if err != nil {
		return 0, fmt.Errorf("encoding decision: %w", err)
	}
	return decisions.Append([][]byte{b})
}
