package runner

import (
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/repair"
	"github.com/writ-ledger/writ/rules"
)

// ClassifyRepair says what RepairLedger's error err refuses, for the
// ledger directory dir, restored from an export when restoring (else
// rebuilt): FailNotOpened for a log that is not one or is in use;
// FailBadInput without a key to verify under (repair.ErrNoVKey);
// FailRefused, "nothing changed: ...", for a trust assertion that does
// not hold (a key, the first root, a policy's quorum) and for an export
// not restored, with, for an export under another key than the
// directory's, the key flag (--vkey, --decisions-vkey) to pass to trust
// it; FailOther, the error as it is, for anything else of a rebuild and
// for a damaged store.
func ClassifyRepair(err error, dir string, restoring bool) Failure {
	switch {
	case errors.Is(err, ledger.ErrNotALog) || errors.Is(err, ledger.ErrLocked):
		return Failure{Kind: FailNotOpened, Err: err}
	case errors.Is(err, repair.ErrNoVKey):
		return Failure{Kind: FailBadInput, Err: err}
	case errors.Is(err, ledger.ErrTrust) && !restoring || errors.Is(err, formats.ErrQuorum):
		return Failure{Kind: FailRefused, Err: fmt.Errorf("nothing changed: %w", err)} // a key, root or policy given does not hold
	case !restoring || errors.Is(err, ledger.ErrStoreDamaged):
		return Failure{Kind: FailOther, Err: err}
	}
	out := Failure{Kind: FailRefused, Err: fmt.Errorf("nothing changed: the export was not restored: %w", err)}
	var te *ledger.TrustError
	if errors.As(err, &te) && te.Rule == rules.VKeyMismatch {
		flag := "--vkey"
		if te.Log == ledgerdir.DecisionsDir {
			flag = "--decisions-vkey"
		}
		out.Hints = []string{fmt.Sprintf("the export is not of the %s log %s holds (whose key is %s): restore an export of that log, or, if its key really changed, pass the export's key with %s KEY", te.Log, humanize.ShellQuote(dir), te.Expected, flag)}
	}
	return out
}
