package audit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/rules"
)

// FleetRefusal is why a fleet audit is not OK, as a caller reports it.
type FleetRefusal struct {
	// Message says what failed: "fleet audit failed: ...".
	Message string
	// Cause is the authority log's failure, typed (Failure.Cause), for a
	// caller to find a refused trust assertion in; nil when runners
	// failed.
	Cause error
	// FleetFile says the refusal is of what the fleet file asserts: a
	// log's key (every failed runner's, or the authority log's: Rule
	// rules.VKeyMismatch), or that it names runners (rules.NothingVerified).
	FleetFile bool
	// Rule is the rule id of a FleetFile refusal, else "".
	Rule string
	// Hints are the next acts, in order (none for most refusals).
	Hints []string
}

// Refusal says why r is not OK, or returns nil when it is: the authority
// log's failure (Failure) first, else the runners' decision logs that did
// not verify (RunnersFailed).
func (r *FleetReport) Refusal() *FleetRefusal {
	switch f := r.Failure; {
	case r.OK:
		return nil
	case f == nil:
		failed, keys := r.RunnersFailed()
		out := &FleetRefusal{Message: fmt.Sprintf("fleet audit failed: %d of %d runners' decision logs did not verify (see the report)", failed, len(r.Runners))}
		if keys {
			out.FleetFile, out.Rule = true, rules.VKeyMismatch
		}
		return out
	case f.Rule == rules.NothingVerified:
		return &FleetRefusal{Message: "fleet audit failed: " + f.Error, Cause: f.Cause, FleetFile: true, Rule: f.Rule,
			Hints: []string{"a fleet audit without runners says nothing about what runners admitted"}}
	}
	out := &FleetRefusal{Message: fmt.Sprintf("fleet audit failed: the %s log: %s", r.Failure.Log, strings.TrimSpace(r.Failure.Error)), Cause: r.Failure.Cause}
	var te *ledger.TrustError
	if errors.As(out.Cause, &te) && te.Rule == rules.VKeyMismatch {
		out.FleetFile, out.Rule = true, rules.VKeyMismatch
	}
	return out
}
