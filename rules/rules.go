// Package rules is writ's one rule vocabulary: every rule id an admission
// verdict or a refused record can name, its class, what it checks and the
// next act for the operator. Package delegation refuses records and
// answers authority questions under these ids; package verify judges
// dispatches under them; the command line prints their next acts. The
// package imports nothing of writ, so every layer can use it.
package rules

// Class groups rules by what they protect; the class decides whether the
// enforcement mode governs the rule (verify's package doc).
type Class string

// Rule classes.
const (
	ClassPass         Class = "pass"
	ClassIntegrity    Class = "integrity"
	ClassAuthenticity Class = "authenticity"
	ClassAuthority    Class = "authority"
	ClassFreshness    Class = "freshness"
	ClassProvenance   Class = "provenance"
	ClassContent      Class = "content"
	ClassPolicy       Class = "policy" // the runner's own admission policy (--policy-cel): refuses in every mode
	ClassInternal     Class = "internal"
)

// Governed reports whether the enforcement mode governs rules of class c.
// Integrity and internal rules refuse in every mode.
func (c Class) Governed() bool {
	switch c {
	case ClassAuthenticity, ClassAuthority, ClassFreshness, ClassProvenance:
		return true
	}
	return false
}

// Rule is one row of the vocabulary.
type Rule struct {
	ID      string
	Class   Class
	Summary string // what the rule checks, one sentence
	// NextAct is what the operator should do when an admission fails the
	// rule ("" for a rule admission never names).
	NextAct string
	// BeforeEnforceAct, when set, follows NextAct ("; " between) in a
	// verdict under mode off or warn: advice for before tightening to
	// enforce, which under enforce is past (NextActIn).
	BeforeEnforceAct string
	// AppendAct is what the operator should do when a record is refused
	// under the rule at append, import or sync ("" for a rule no record
	// is refused under).
	AppendAct string
	// ReportAct is what the operator should do when a command other than
	// an admission (sync, import, audit, a fleet audit) refuses under the
	// rule: a trust assertion the operator gave that the log does not
	// meet, or a report that verified nothing ("" for a rule those
	// commands do not refuse under by itself).
	ReportAct string
	// StoreAct is what the operator should do when a log's store is
	// refused because it is damaged on disk ("" for the other rules).
	StoreAct string
	// Always marks a rule of a governed class that nevertheless refuses in
	// every mode, because its failure is evidence of tampering rather than
	// of missing authority (a signature by a trusted key that does not
	// verify over the bytes received).
	Always bool
}

// Governed reports whether the enforcement mode governs this rule: its
// class is governed and the rule is not marked Always.
func (r Rule) Governed() bool { return r.Class.Governed() && !r.Always }

// Lookup returns the rule with id, or false.
func Lookup(id string) (Rule, bool) {
	for _, r := range All {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// Admission returns the rules an admission verdict can name, in the order
// the checks run.
func Admission() []Rule {
	var out []Rule
	for _, r := range All {
		if r.NextAct != "" {
			out = append(out, r)
		}
	}
	return out
}

// Listing is a rule as `writ admit --rules --json` lists it, one object
// per rule (Rule.Listing).
type Listing struct {
	Rule     string `json:"rule" doc:"the rule id"`
	Class    Class  `json:"class" doc:"its class"`
	Governed bool   `json:"governed" doc:"whether --mode governs it (else it refuses in every mode)"`
	Summary  string `json:"summary" doc:"what it checks"`
	NextAct  string `json:"next_act" doc:"what the operator does when it fails"`
}

// Listing returns r's id, class, whether the mode governs it, what it
// checks and the next act after an admission it fails.
func (r Rule) Listing() Listing {
	return Listing{r.ID, r.Class, r.Governed(), r.Summary, r.NextActIn("off")}
}

// NextActIn is r's next act for a verdict under mode ("off", "warn" or
// "enforce"): NextAct, then BeforeEnforceAct unless the mode is enforce.
func (r Rule) NextActIn(mode string) string {
	if r.BeforeEnforceAct == "" || mode == "enforce" {
		return r.NextAct
	}
	return r.NextAct + "; " + r.BeforeEnforceAct
}
