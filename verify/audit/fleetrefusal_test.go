package audit

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/rules"
)

// TestFleetRefusal: the message, the rule, and whether the fleet file's
// assertion is refused, for each way a fleet audit fails.
func TestFleetRefusal(t *testing.T) {
	mismatch := fmt.Errorf("decisions: %w", &ledger.TrustError{Rule: rules.VKeyMismatch, Err: errors.New("x")})
	root := &ledger.TrustError{Rule: rules.RootUntrusted, Err: errors.New("y")}
	other := errors.New("fetch failed")
	for _, tc := range []struct {
		name string
		rep  FleetReport
		want *FleetRefusal
	}{
		{"ok", FleetReport{OK: true}, nil},
		{"runner keys", FleetReport{Runners: []RunnerReport{{OK: true}, {Failure: &Failure{Cause: mismatch}}}},
			&FleetRefusal{Message: "fleet audit failed: 1 of 2 runners' decision logs did not verify (see the report)", FleetFile: true, Rule: rules.VKeyMismatch}},
		{"runner other", FleetReport{Runners: []RunnerReport{{Failure: &Failure{Cause: other}}}},
			&FleetRefusal{Message: "fleet audit failed: 1 of 1 runners' decision logs did not verify (see the report)"}},
		{"nothing verified", FleetReport{Failure: &Failure{Log: "authority", Rule: rules.NothingVerified, Error: ErrNothingVerified.Error(), Cause: ErrNothingVerified}},
			&FleetRefusal{Message: "fleet audit failed: " + ErrNothingVerified.Error(), Cause: ErrNothingVerified, FleetFile: true, Rule: rules.NothingVerified,
				Hints: []string{"a fleet audit without runners says nothing about what runners admitted"}}},
		{"authority key", FleetReport{Failure: &Failure{Log: "authority", Error: " bad key\n", Cause: mismatch}},
			&FleetRefusal{Message: "fleet audit failed: the authority log: bad key", Cause: mismatch, FleetFile: true, Rule: rules.VKeyMismatch}},
		{"authority root", FleetReport{Failure: &Failure{Log: "authority", Error: "root", Cause: root}},
			&FleetRefusal{Message: "fleet audit failed: the authority log: root", Cause: root}},
	} {
		if got := tc.rep.Refusal(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
