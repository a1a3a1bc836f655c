package verify

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
)

// TestUnrecordableIsRefused: a decision that cannot be encoded (here, more
// passed checks than schemas.MaxChecks) becomes a refusal under
// internal-error that can be, keeping the runner's marks unraised and no
// claim.
func TestUnrecordableIsRefused(t *testing.T) {
	c := &Checked{&admission{cfg: Config{HighWater: MarkMap{"agent": "v1.0.0"}}, named: []string{"agent"}}}
	v := &Verdict{Verdict: Admitted, Rule: rules.OK, Mode: ModeOff, Machine: "runner-1", InstructionDigest: schemas.SHA256Digest(nil), Time: time.Unix(1, 0),
		HighWater: map[string]string{"agent": "v2.0.0"}, Signer: strings.Repeat("a", 64), Claim: &schemas.Claim{Session: "s", Until: 2}}
	for i := range schemas.MaxChecks + 1 {
		v.Passed = append(v.Passed, fmt.Sprintf("check-%d", i))
	}
	_, err := schemas.Encode(Decision(v))
	var fe *schemas.FieldError
	if !errors.As(err, &fe) || fe.Field != "passed" {
		t.Fatalf("the oversized decision encoded: %v", err)
	}
	r := c.Unrecordable(v, err)
	if r.Verdict != Refused || r.Rule != rules.Internal || r.Claim != nil || r.HighWater["agent"] != "v1.0.0" {
		t.Fatalf("refusal %s/%s claim %v marks %v", r.Verdict, r.Rule, r.Claim, r.HighWater)
	}
	if _, err := schemas.Encode(Decision(r)); err != nil {
		t.Fatalf("the refusal cannot be recorded either: %v", err)
	}
}
