package verify

import (
	"fmt"

	"github.com/writ-ledger/writ/rules"
)

// Rules is the admission rule vocabulary, in the order checks run
// (rules.Admission). `writ admit --rules` prints it; the package doc's
// table is the same list.
var Rules = rules.Admission()

// LookupRule returns the admission rule with id, or false: also for a
// rule of package rules that only refuses records (threshold-not-met,
// exceeds-parent, ...), which no verdict may name; a verdict under such
// a rule is an internal error, refused in every mode.
func LookupRule(id string) (rules.Rule, bool) {
	if r, ok := rules.Lookup(id); ok && r.NextAct != "" {
		return r, true
	}
	return rules.Rule{}, false
}

// ParseRefuse returns the rules named for Config.AlwaysRefuse: each must
// be a rule of the vocabulary other than ok. Listing a rule can only
// tighten: there is no way to admit what a mode refuses.
func ParseRefuse(ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, id := range ids {
		if id == rules.OK {
			return nil, fmt.Errorf("%q is the rule of a verdict with no failure; name a rule that can fail (see writ admit --rules)", id)
		}
		if _, ok := LookupRule(id); !ok {
			return nil, fmt.Errorf("%q is not a rule id (see writ admit --rules)", id)
		}
		out[id] = true
	}
	return out, nil
}
