package runner

import (
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/repair"
	"github.com/writ-ledger/writ/verify"
)

// RepairOptions are RepairLedger's: the trust the repaired ledger is
// kept under, and where it is restored from.
type RepairOptions struct {
	// VKey and DecisionsVKey are the authority and decision logs'
	// checkpoint keys given (nil: the key each log stores).
	VKey, DecisionsVKey *formats.LogKey
	// TrustRoot (the first root's digest, "" for none) and Policy (nil
	// for none) judge the authority log kept, found whole or rebuilt, as
	// an import judges what it restores.
	TrustRoot string
	Policy    *formats.Policy
	// From is an export file (replica.Export) to restore the damaged logs
	// from, imported with every check ImportLedgerWith runs; "" rebuilds
	// them from their own files.
	From string
}

// RepairLedger is repair.Repair of the ledger at dir under o's trust: each
// log kept must verify under its key given (else the one it stores);
// with a TrustRoot or Policy the authority log kept must meet them
// (verify.Trust.Refusal: a *ledger.TrustError, formats.ErrQuorum, ...);
// with From the damaged logs are restored from that export by
// ImportLedgerWith, else rebuilt from their files. It returns
// repair.Repair's result and errors (repair.ErrNoVKey, ledger.ErrLocked,
// ledger.ErrNotALog, ...); nothing changes on an error.
func RepairLedger(dir string, o RepairOptions) (*repair.RepairResult, error) {
	opts := repair.RepairOptions{VKeys: map[string]*formats.LogKey{ledgerdir.AuthorityDir: o.VKey, ledgerdir.DecisionsDir: o.DecisionsVKey}}
	trust := verify.Trust{VKey: o.VKey, TrustRoot: o.TrustRoot, Policy: o.Policy}
	if trust.TrustRoot != "" || trust.Policy != nil {
		opts.Check = func(name, store string) error {
			if name != ledgerdir.AuthorityDir {
				return nil
			}
			return trust.Refusal(store, time.Now())
		}
	}
	if o.From != "" {
		opts.Restore = func(d string, rt repair.RestoreTrust) error {
			_, err := ImportLedgerWith(d, o.From, ImportOptions{Trusted: rt.VKeys, TrustedKeys: rt.Keys, Floors: rt.Floors,
				Trust: verify.Trust{TrustRoot: o.TrustRoot, Policy: o.Policy}})
			return err
		}
	}
	return repair.Repair(dir, opts)
}
