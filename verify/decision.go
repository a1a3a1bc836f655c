package verify

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
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

// LastTrusted returns the authority checkpoint the runner trusted at its
// latest decision (nil before the first decision that recorded one). The
// decision log is signed by the runner key, so this memory is as good as
// that key. The origin is the authority origin the decision log was named
// after.
func LastTrusted(decisions *ledger.Log) (*formats.Checkpoint, error) {
	d, err := lastDecision(decisions)
	if err != nil || d == nil || d.AuthorityRoot == "" {
		return nil, err
	}
	root, err := hex.DecodeString(d.AuthorityRoot)
	if err != nil {
		return nil, err
	}
	origin := decisions.Origin()
	if i := strings.LastIndex(origin, "/decisions/"); i > 0 {
		origin = origin[:i]
	}
	cp := &formats.Checkpoint{Origin: origin, Size: d.AuthoritySize}
	copy(cp.Hash[:], root)
	return cp, nil
}

// lastDecision returns the decision log's latest decision, or nil. The
// entry is read only after it is proven to be in the tree the runner's
// latest signed checkpoint commits to: what the runner remembers (its
// trusted authority checkpoint, its high-water marks) cannot be edited on
// disk without the runner key.
func lastDecision(decisions *ledger.Log) (*schemas.Decision, error) {
	n := decisions.Size()
	if n == 0 {
		return nil, nil
	}
	entry, err := decisions.VerifiedEntry(n - 1)
	if err != nil {
		return nil, err
	}
	rec, err := schemas.Decode(schemas.KindDecision, entry)
	if err != nil {
		return nil, fmt.Errorf("decision %d: %w", n-1, err)
	}
	return rec.(*schemas.Decision), nil
}
