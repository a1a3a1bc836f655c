package ledgerdir

import "github.com/writ-ledger/writ/ledger/formats"

// CheckPolicy refuses a witness policy (c2sp.org/tlog-policy) whose log
// lines name other logs than the log of key k or, k nil, the authority
// log of d (the key it stores, VerifierKey): such a policy could never
// be met, and a writer would sign a checkpoint before finding out. A nil
// policy, one with no log line (it applies to any log), and, k nil, a
// directory whose key cannot be read (its caller meets the ledger
// itself) pass. The error is Policy.CheckLog's, wrapping
// formats.ErrPolicyLog.
func (d Dir) CheckPolicy(p *formats.Policy, k *formats.LogKey) error {
	if p == nil || len(p.Logs) == 0 {
		return nil
	}
	if k == nil {
		var err error
		if k, err = d.VerifierKey(); err != nil {
			return nil
		}
	}
	return p.CheckLog(k)
}
