package delegation

import (
	"slices"

	"github.com/writ-ledger/writ/schemas"
)

// Actions reads each of names as an action, in order, unchecked:
// NewDelegation sorts them and drops repeats, and the record's field rule
// (package schemas) refuses a name that is no action, by its position.
func Actions(names []string) []schemas.Action {
	var out []schemas.Action
	for _, a := range names {
		out = append(out, schemas.Action(a))
	}
	return out
}

// DelegatesNothing reports whether p grants schemas.ActionDelegate with
// Depth 0: a valid delegation, but one whose key may re-delegate nothing
// (every re-delegation it signs is refused), which a caller may warn of.
func (p DelegationParams) DelegatesNothing() bool {
	return p.Depth == 0 && slices.Contains(p.Actions, schemas.ActionDelegate)
}
