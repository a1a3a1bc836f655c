package delegation

import (
	"slices"
	"testing"

	"github.com/writ-ledger/writ/schemas"
)

func TestActions(t *testing.T) {
	got := Actions([]string{"pin", "instruct", "pin", ""})
	if want := []schemas.Action{"pin", "instruct", "pin", ""}; !slices.Equal(got, want) {
		t.Errorf("Actions: %q, want %q", got, want)
	}
	if Actions(nil) != nil {
		t.Error("Actions(nil) is not nil")
	}
	for _, tc := range []struct {
		p    DelegationParams
		want bool
	}{
		{DelegationParams{Actions: []schemas.Action{schemas.ActionDelegate}}, true},
		{DelegationParams{Actions: []schemas.Action{schemas.ActionInstruct, schemas.ActionDelegate}, Depth: 0}, true},
		{DelegationParams{Actions: []schemas.Action{schemas.ActionDelegate}, Depth: 1}, false},
		{DelegationParams{Actions: []schemas.Action{schemas.ActionInstruct}}, false},
	} {
		if got := tc.p.DelegatesNothing(); got != tc.want {
			t.Errorf("%+v: DelegatesNothing %v, want %v", tc.p, got, tc.want)
		}
	}
}
