package audit

import (
	"errors"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/rules"
)

// RunnersFailed counts the runners of r whose decision log did not
// verify, and reports whether every one of them (at least one) failed
// under the key the fleet file gives for it: a *ledger.TrustError of
// rule rules.VKeyMismatch, the fleet file's assertion refused.
func (r *FleetReport) RunnersFailed() (failed int, keyMismatch bool) {
	keys := true
	for _, run := range r.Runners {
		if run.OK {
			continue
		}
		failed++
		var te *ledger.TrustError
		if run.Failure == nil || !errors.As(run.Failure.Cause, &te) || te.Rule != rules.VKeyMismatch {
			keys = false
		}
	}
	return failed, failed > 0 && keys
}
