package verify

import (
	"github.com/writ-ledger/writ/ledger"
)

// InitAuthority creates the ledger at d (ledger.Dir.Init: d absent or
// empty, the checkpoint key as key says, an authority log with origin)
// and appends root, its first entry, through the authority gate as every
// later append is (LoadAuthority, Authority.Append): atomically, so that
// when root is refused nothing of the ledger is left. It returns the
// authority, whose Log is open for appending (the caller closes it).
// Errors: root's refusal (a *delegation.RecordError and the like) as a
// *ledger.FirstEntryError; else those of ledger.Dir.Init.
func InitAuthority(d ledger.Dir, origin string, key ledger.NewKey, root []byte) (*Authority, error) {
	var a *Authority
	_, err := d.Init(origin, key, func(l *ledger.Log) error {
		var err error
		if a, err = LoadAuthority(l, l.VerifierKey()); err != nil {
			return err
		}
		_, err = a.Append([][]byte{root})
		return err
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}
