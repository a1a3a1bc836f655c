package runner

import (
	"fmt"

	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/verify"
)

// notRecorded returns v as the refusal it is when its decision did not
// reach the decision log: whatever the checks found, a dispatch whose
// decision is not durable must not run, and no output may call it
// admitted.
func notRecorded(v *verify.Verdict) *verify.Verdict {
	if v == nil || v.Verdict == verify.Refused {
		return v
	}
	r, _ := verify.LookupRule(rules.Internal)
	out := *v
	out.Reason = fmt.Sprintf("the decision (%s, rule %s) was not recorded, so the dispatch must not run", v.Verdict, v.Rule)
	out.Verdict, out.Rule, out.Class, out.NextAct = verify.Refused, rules.Internal, r.Class, r.NextAct
	return &out
}
