package replica

import (
	"fmt"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
)

// Floor is a checkpoint of a log that its ledger directory shows: the
// newest signed checkpoint the files of its damaged store still hold, or
// the authority checkpoint the directory's decision log recorded a
// decision against. A log repaired or restored there must reach it and
// extend it (the same root at its size): a shorter log would lose
// entries the directory held, and the next append would make the log key
// sign a second tree of a size it had signed (a fork).
type Floor struct {
	formats.Checkpoint        // Origin is "" when not known (a decision records size and root)
	Where              string // where it was found
}

// Check returns nil if the log l, whose verified checkpoint is cp,
// reaches and extends fl (cp.Size >= fl.Size, the same origin when fl
// names one, and l's tree of fl.Size entries has root fl.Hash), and else
// a *ledger.InconsistencyError (ledger.ErrInconsistent) saying what size the log needs.
// A zero Floor is always met.
func (fl Floor) Check(l *ledger.Log, cp formats.Checkpoint) error {
	if fl.Size == 0 {
		return nil
	}
	if cp.Size >= fl.Size && (fl.Origin == "" || fl.Origin == cp.Origin) {
		if h, err := l.TreeHash(fl.Size); err == nil && h == fl.Hash {
			return nil
		}
	}
	return fl.Refusal("the "+l.Role()+" log", cp)
}

// Refusal is the *ledger.InconsistencyError (ledger.ErrInconsistent) for what (a log,
// named for the message, whose verified checkpoint is cp) that does not
// reach or extend fl.
func (fl Floor) Refusal(what string, cp formats.Checkpoint) error {
	trusted := fl.Checkpoint
	if trusted.Origin == "" {
		trusted.Origin = cp.Origin
	}
	return &ledger.InconsistencyError{Trusted: trusted, Found: cp, Why: fmt.Sprintf(
		"%s holds %s, which do not extend the checkpoint of %s the ledger directory shows (%s): it needs at least %s that extend it",
		what, nEntries(cp.Size), nEntries(fl.Size), fl.Where, nEntries(fl.Size))}
}

// nEntries says "1 entry", "2 entries".
func nEntries(n int64) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}
