package verify

import (
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
)

// InitAuthority creates the ledger at d (ledgerdir.Dir.Init: d absent or
// empty, the checkpoint key as key says, an authority log with origin)
// and appends root, its first entry, through the authority gate as every
// later append is (LoadAuthority, Authority.Append): atomically, so that
// when root is refused nothing of the ledger is left. It returns the
// authority, whose Log is open for appending (the caller closes it).
// Errors: root's refusal (a *delegation.RecordError and the like) as a
// *ledgerdir.FirstEntryError; else those of ledgerdir.Dir.Init.
func InitAuthority(d ledgerdir.Dir, origin string, key ledgerdir.NewKey, root []byte) (*Authority, error) {
	var a *Authority
	_, err := d.Init(origin, key, func(l *ledger.Log) error {
		var err error
		if a, err = LoadAuthority(l, nil); err != nil {
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

// LoadError is the error of an authority log that opened but did not
// verify or replay under the trust stated (OpenAuthority): LoadAuthority's
// error (an *ledger.IntegrityError, a *delegation.RecordError, a
// *ledger.TrustError, ledger.ErrHistory), or Trust.CheckRoot's or
// Trust.CheckWitnessed's. Its message is Err's.
type LoadError struct{ Err error }

func (e *LoadError) Error() string { return e.Err.Error() }

// Unwrap returns the verification's error.
func (e *LoadError) Unwrap() error { return e.Err }

// OpenAuthority opens the authority log of the ledger directory d under a
// stated trust and returns it verified and replayed (LoadAuthority):
// under trust.VKey, or, when that is nil, the key the directory stores
// (Authority.KeyGiven says which; the stored key proves only that the log
// is self-consistent). When trust.TrustRoot is set the first root must be
// that one (Trust.CheckRoot); when trust.Policy is set the latest
// checkpoint must meet it now (Trust.CheckWitnessed). With unlock nil the
// log is opened for reading only; else its checkpoint key is unlocked as
// unlock says (ledgerdir.Dir.OpenAuthorityKeyed), so that Authority.Append
// works. The caller closes Authority.Log. Errors: those of opening
// (ledgerdir.Dir.OpenLog, ledgerdir.Dir.OpenAuthorityKeyed) as they are; a
// failed verification as a *LoadError.
func OpenAuthority(d ledgerdir.Dir, trust Trust, unlock *ledgerdir.Unlock) (*Authority, error) {
	var l *ledger.Log
	var err error
	if unlock == nil {
		l, err = d.OpenLog(ledgerdir.AuthorityLog)
	} else {
		l, err = d.OpenAuthorityKeyed(*unlock)
	}
	if err != nil {
		return nil, err
	}
	k, given := trust.VKey, trust.VKey != nil
	if !given {
		k = l.Key()
	}
	a, err := LoadAuthority(l, k)
	if err == nil {
		err = trust.CheckRoot(a.State)
	}
	if err == nil {
		_, err = trust.CheckWitnessed(l, k, a.Checkpoint, func() (time.Time, error) { return time.Now(), nil })
	}
	if err != nil {
		l.Close()
		return nil, &LoadError{Err: err}
	}
	a.KeyGiven = given
	return a, nil
}
