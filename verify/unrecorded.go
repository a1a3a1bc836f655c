package verify

import "fmt"

// refuseUnrecordable turns verdict v, whose decision could not be encoded
// (err), into a refusal under RuleInternal that can be: the failed rule
// and the reason only, no comparisons, checks, claim or raised marks. A
// decision too large to record is never an admission.
func (a *admission) refuseUnrecordable(v *Verdict, err error) *Verdict {
	r, _ := LookupRule(RuleInternal)
	out := *v
	out.Verdict, out.Rule, out.Class, out.NextAct = Refused, RuleInternal, r.Class, r.NextAct
	out.Reason = fmt.Sprintf("the decision (%s, rule %s) could not be recorded: %v", v.Verdict, v.Rule, err)
	out.Failed = []Finding{{Rule: RuleInternal, Reason: out.Reason}}
	out.Compared, out.Passed, out.Claim = nil, nil, nil
	out.HighWater = a.carried()
	return &out
}

// notRecorded returns v as the refusal it is when its decision did not
// reach the decision log: whatever the checks found, a dispatch whose
// decision is not durable must not run, and no output may call it
// admitted.
func notRecorded(v *Verdict) *Verdict {
	if v == nil || v.Verdict == Refused {
		return v
	}
	r, _ := LookupRule(RuleInternal)
	out := *v
	out.Reason = fmt.Sprintf("the decision (%s, rule %s) was not recorded, so the dispatch must not run", v.Verdict, v.Rule)
	out.Verdict, out.Rule, out.Class, out.NextAct = Refused, RuleInternal, r.Class, r.NextAct
	return &out
}
