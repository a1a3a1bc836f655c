package verify

import (
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/schemas"
)

// ImportLedger is ledger.Import with the checks writ runs when a log
// grows: every entry of the export's authority log, from entry 0, is
// replayed into a fresh authority state at the time the log accepted it
// (its signatures, its signer's authority, the time rule), exactly as an
// append judged it, and its first root must have the digest trustRoot
// when one is given (RuleRootUntrusted's check); every decision of a
// decisions section must decode strictly. An export that fails any check
// stores nothing: the replica keeps what it held. trusted maps a section
// name to the verifier key its checkpoints must verify under. Errors: a
// *delegation.RecordError with the entry's index, and those of
// ledger.Import.
func ImportLedger(dir, path string, trusted map[string]string, trustRoot string) ([]ledger.ImportedLog, error) {
	return ledger.Import(dir, path, trusted, func(name string) (ledger.EntryFunc, func() error) {
		if name == "decisions" {
			return decodeDecisions()
		}
		st := delegation.NewState()
		fn, wait := parallelApply(st, nil)
		return fn, func() error {
			if err := wait(); err != nil {
				return err
			}
			return Trust{TrustRoot: trustRoot}.checkRoot(&Authority{State: st})
		}
	})
}

// decodeDecisions checks that every entry is a decision record in strict
// encoding, on every core, refusing the first that is not.
func decodeDecisions() (ledger.EntryFunc, func() error) {
	return ordered(func(entry []byte) error {
		_, err := schemas.Decode(schemas.KindDecision, entry)
		return err
	}, func(i int64, err error, _ time.Time) error {
		if err != nil {
			return &delegation.RecordError{Index: i, Rule: delegation.RuleMalformed, Err: err}
		}
		return nil
	})
}
