package verify

import (
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// CheckRecord judges entry, a signed record, against the authority log of
// d (opened read-only under trust and verified, OpenAuthority) as if it
// were appended now at time at: every signature and authority rule
// ledger append applies (a re-delegation that exceeds its parent is
// refused under rules.NotAttenuated, exceeds-parent). Nothing is written. It
// returns what the append would apply. Errors: *AuthorityError when the
// log cannot be opened and verified; a *delegation.RecordError naming
// the rule of a refusal.
func CheckRecord(d ledgerdir.Dir, trust Trust, entry []byte, at time.Time) (*delegation.Applied, error) {
	a, err := OpenAuthority(d, trust, nil)
	if err != nil {
		return nil, &AuthorityError{err}
	}
	defer a.Log.Close()
	return a.State.Apply(entry, at)
}
