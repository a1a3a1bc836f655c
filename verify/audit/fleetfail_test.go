package audit

import (
	"errors"
	"fmt"
	"testing"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/rules"
)

func TestRunnersFailed(t *testing.T) {
	mismatch := &Failure{Cause: fmt.Errorf("decisions: %w", &ledger.TrustError{Rule: rules.VKeyMismatch, Err: errors.New("x")})}
	other := &Failure{Cause: errors.New("fetch failed")}
	for _, tc := range []struct {
		name    string
		runners []RunnerReport
		failed  int
		keys    bool
	}{
		{"all good", []RunnerReport{{OK: true}}, 0, false},
		{"every failure a key", []RunnerReport{{OK: true}, {Failure: mismatch}, {Failure: mismatch}}, 2, true},
		{"one other failure", []RunnerReport{{Failure: mismatch}, {Failure: other}}, 2, false},
		{"no failure record", []RunnerReport{{}}, 1, false},
	} {
		failed, keys := (&FleetReport{Runners: tc.runners}).RunnersFailed()
		if failed != tc.failed || keys != tc.keys {
			t.Errorf("%s: %d, %v; want %d, %v", tc.name, failed, keys, tc.failed, tc.keys)
		}
	}
}
