package ledgerdir

import (
	"errors"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
)

// LogKey returns the checkpoint verifier key the log name (AuthorityLog
// or DecisionsLog) of d stores, its name the log's origin: the log is
// opened for reading (OpenLog) and closed again. A decision log that
// another process holds (ledger.ErrLocked: a running admission server)
// is not opened: its key follows from the runner's public key and the
// authority log's origin (DecisionsVerifierKey). The key proves nothing
// about the log: a reader that trusts a key states it. Errors: OpenLog's
// (ErrNoDecisionLog wrapped, an unknown name, ledger.ErrLocked for the
// authority log), DecisionsVerifierKey's, and formats.ParseLogKey's.
func (d Dir) LogKey(name string) (*formats.LogKey, error) {
	l, err := d.OpenLog(name)
	if errors.Is(err, ledger.ErrLocked) && name == DecisionsLog {
		vkey, kerr := DecisionsVerifierKey(string(d))
		if kerr != nil {
			return nil, kerr
		}
		return formats.ParseLogKey(vkey)
	}
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return l.Key(), nil
}
