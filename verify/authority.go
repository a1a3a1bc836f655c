package verify

import (
	"fmt"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/schemas"
)

// MaxClockSkew is how far in the future a record's issued_at may be when
// it is appended, in seconds of this machine's clock: a record dated later
// could be used to reach past a window that has not opened yet.
const MaxClockSkew = 5 * time.Minute

// Authority is an authority log together with the state its verified
// entries build.
type Authority struct {
	Log        *ledger.Log
	State      *delegation.State
	Checkpoint ledger.Checkpoint
}

// LoadAuthority verifies the whole authority log against its latest
// checkpoint under vkey (ledger.Log.Verify) and replays every entry into a
// fresh delegation state, re-verifying each signature and each signer's
// authority. Any failure is returned with the entry's index: an
// *ledger.IntegrityError or a *delegation.RecordError.
func LoadAuthority(log *ledger.Log, vkey string) (*Authority, error) {
	st := delegation.NewState()
	cp, err := log.Verify(vkey, func(i int64, entry []byte) error {
		_, err := st.Apply(entry)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Authority{Log: log, State: st, Checkpoint: cp}, nil
}

// Append checks every record against the authority state, in order, as if
// the earlier ones had been appended, and then appends them all in one
// durable batch. If any record is refused, nothing is appended and the
// error is a *delegation.RecordError naming the batch position and the
// rule. A record issued more than MaxClockSkew in the future is refused.
// It returns what was applied.
func (a *Authority) Append(entries [][]byte, now time.Time) ([]*delegation.Applied, error) {
	next := a.State.Clone()
	var out []*delegation.Applied
	for i, e := range entries {
		applied, err := next.Apply(e)
		if err != nil {
			return nil, fmt.Errorf("record %d of %d: %w", i+1, len(entries), err)
		}
		if t := issuedAt(applied); t.After(now.Add(MaxClockSkew)) {
			return nil, fmt.Errorf("record %d of %d: issued_at %s is more than %s after this machine's clock (%s)",
				i+1, len(entries), t.UTC().Format(time.RFC3339), MaxClockSkew, now.UTC().Format(time.RFC3339))
		}
		out = append(out, applied)
	}
	if _, err := a.Log.Append(entries); err != nil {
		return nil, err
	}
	a.State = next
	return out, nil
}

func issuedAt(a *delegation.Applied) time.Time {
	var sec int64
	switch r := a.Record.(type) {
	case *schemas.Root:
		sec = r.IssuedAt
	case *schemas.Delegation:
		sec = r.IssuedAt
	case *schemas.Pin:
		sec = r.IssuedAt
	case *schemas.Instruction:
		sec = r.IssuedAt
	}
	return time.Unix(sec, 0)
}
