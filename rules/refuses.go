package rules

// The modes a rule refuses in, as Rule.Refuses names them (writ admit
// --rules' REFUSES column).
const (
	RefusesNever   = "never"   // the rule OK: nothing failed
	RefusesEnforce = "enforce" // only under --mode enforce (Governed)
	RefusesAlways  = "always"  // in every mode
)

// Refuses says in which modes a failure of r refuses a dispatch:
// RefusesNever for OK, RefusesEnforce for a rule --mode governs,
// RefusesAlways for the others.
func (r Rule) Refuses() string {
	switch {
	case r.ID == OK:
		return RefusesNever
	case r.Governed():
		return RefusesEnforce
	}
	return RefusesAlways
}
