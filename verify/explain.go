package verify

import (
	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// Explain answers r against the authority log of the ledger directory d,
// opened under trust, read and verified in full (OpenAuthority), as
// delegation.State.Explain does: allowed with the delegation chain, or,
// with the explanation, a *delegation.Denial naming the rule. Errors:
// *AuthorityError when the log cannot be opened and verified.
func Explain(d ledgerdir.Dir, trust Trust, r delegation.Request) (*delegation.Explanation, error) {
	a, err := OpenAuthority(d, trust, nil)
	if err != nil {
		return nil, &AuthorityError{err}
	}
	defer a.Log.Close()
	return a.State.Explain(r)
}
