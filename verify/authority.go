package verify

import (
	"fmt"
	"sync"
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
// entries build. Append is safe for concurrent use: appends are batched
// (group commit) and checked in log order; signatures are verified by the
// appending goroutines, ahead of the batch.
type Authority struct {
	Log        *ledger.Log
	State      *delegation.State
	Checkpoint ledger.Checkpoint
	// Now is the clock for the future-date check; time.Now by default.
	Now func() time.Time

	mu sync.RWMutex // guards State while the committer applies a batch
}

// LoadAuthority verifies the whole authority log against its latest
// checkpoint under vkey (ledger.Log.Verify) and replays every entry into a
// fresh delegation state, re-verifying each signature and each signer's
// authority. Any failure is returned with the entry's index: an
// *ledger.IntegrityError or a *delegation.RecordError. The returned
// Authority appends through log.
func LoadAuthority(log *ledger.Log, vkey string) (*Authority, error) {
	return loadAuthority(log, vkey, nil, nil)
}

// loadAuthority is LoadAuthority, calling applied (if not nil) with each
// record as it is applied, and with the entry callback wrapped by wrap
// (if not nil; the audit counts progress).
func loadAuthority(log *ledger.Log, vkey string, applied func(*delegation.Applied), wrap func(ledger.EntryFunc) ledger.EntryFunc) (*Authority, error) {
	st := delegation.NewState()
	fn, wait := parallelApply(st, applied)
	if wrap != nil {
		fn = wrap(fn)
	}
	cp, err := log.Verify(vkey, fn)
	if werr := wait(); werr != nil {
		err = werr // the entry's own refusal, with its index
	}
	if err != nil {
		return nil, err
	}
	a := &Authority{Log: log, State: st, Checkpoint: cp, Now: time.Now}
	log.SetGate(gate{a})
	return a, nil
}

// Append checks every record against the authority state, in order, as if
// the earlier ones had been appended, and appends them all in one durable
// batch (possibly shared with concurrent callers). If any record is
// refused, nothing of this call is appended and the error is a
// *delegation.RecordError naming the rule, wrapped with the record's
// position in the call. A record issued more than MaxClockSkew after Now
// is refused. It returns what was applied.
func (a *Authority) Append(entries [][]byte) ([]*delegation.Applied, error) {
	preps := make([]any, len(entries))
	items := make([]*item, len(entries))
	for i, e := range entries {
		items[i] = &item{p: delegation.Prepare(e, a.State.Directory)}
		preps[i] = items[i]
	}
	if _, err := a.Log.AppendPrepared(entries, preps); err != nil {
		return nil, err
	}
	out := make([]*delegation.Applied, len(items))
	for i, it := range items {
		out[i] = it.applied
	}
	return out, nil
}

// item carries a prepared entry to the gate and its result back.
type item struct {
	p       *delegation.Prepared
	applied *delegation.Applied
}

// gate adapts the authority state to ledger.Gate.
type gate struct{ a *Authority }

func (g gate) Mark() int64 {
	g.a.mu.Lock()
	defer g.a.mu.Unlock()
	return g.a.State.Mark()
}

func (g gate) Reset(mark int64) {
	g.a.mu.Lock()
	defer g.a.mu.Unlock()
	g.a.State.Reset(mark)
}

func (g gate) Settle() {
	g.a.mu.Lock()
	defer g.a.mu.Unlock()
	g.a.State.Settle()
}

func (g gate) Admit(entry []byte, prepared any) error {
	it, _ := prepared.(*item)
	if it == nil {
		it = &item{p: delegation.Prepare(entry, nil)}
	}
	g.a.mu.Lock()
	defer g.a.mu.Unlock()
	applied, err := g.a.State.ApplyPrepared(it.p)
	if err != nil {
		return err
	}
	if t := issuedAt(applied); t.After(g.a.Now().Add(MaxClockSkew)) {
		g.a.State.Reset(applied.Index)
		return fmt.Errorf("issued_at %s is more than %s after this machine's clock (%s)",
			t.UTC().Format(time.RFC3339), MaxClockSkew, g.a.Now().UTC().Format(time.RFC3339))
	}
	it.applied = applied
	return nil
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
