package verify

import (
	"fmt"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/rules"
)

// Checked is an admission whose checks have run, all but the runner's
// history (replay, work claims): the part of Admit that needs no lock.
// A runner checks admissions in parallel, then decides each under its
// lock with Decide, against the history as it is at that moment. A
// Checked is used once, by one goroutine.
type Checked struct{ a *admission }

// Check runs every check of Admit on dispatch d against the authority
// state st, the policy's last, except the runner's history: cfg.History
// is not consulted (Decide takes the history). Like Admit, it never panics: a panic in a
// check is a rules.Internal finding.
func Check(st *delegation.State, cfg Config, d Dispatch) *Checked {
	a := newAdmission(st, cfg, d)
	a.protect(func() { a.check(d) })
	a.protect(a.checkPolicy)
	return &Checked{a}
}

// Refusing is a Checked admission of d that runs no check and fails rule
// with err as its reason: the runner's ledger could not be trusted (rule
// rules.LedgerUnverified, rules.LedgerInconsistent, rules.RootUntrusted,
// rules.VKeyMismatch, rules.LedgerUnwitnessed) or read (rules.Internal).
func Refusing(cfg Config, d Dispatch, rule string, err error) *Checked {
	a := newAdmission(nil, cfg, d)
	a.fail(rule, "%v", err)
	return &Checked{a}
}

// Decide checks the runner's history h (nil remembers nothing) and
// decides the verdict (see Admit), with its high-water marks. It never
// panics and never returns nil.
func (c *Checked) Decide(h History) *Verdict {
	a := c.a
	a.cfg.History = h
	a.protect(a.checkHistory)
	return a.finish()
}

// Unrecordable turns verdict v, which Decide returned and whose decision
// could not be encoded (err), into a refusal under rules.Internal that can
// be: the failed rule and the reason only, no comparisons, checks, claim
// or raised marks. A decision too large to record is never an admission.
func (c *Checked) Unrecordable(v *Verdict, err error) *Verdict {
	r, _ := LookupRule(rules.Internal)
	out := *v
	out.Verdict, out.Rule, out.Class, out.NextAct = Refused, rules.Internal, r.Class, r.NextAct
	out.Reason = fmt.Sprintf("the decision (%s, rule %s) could not be recorded: %v", v.Verdict, v.Rule, err)
	out.Failed = []Finding{{Rule: rules.Internal, Reason: out.Reason}}
	out.Compared, out.Passed, out.Claim = nil, nil, nil
	out.HighWater = c.a.carried()
	return &out
}
