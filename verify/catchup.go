package verify

import (
	"fmt"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/stateview"
)

// Extend extends the state by the entries stored past it by another
// writer of the log (engine.Writer, from the committer, before a batch
// is judged: entries that writers sharing an engine sequenced, verified
// into the log's signed tree by ledger.ReplicaWriter): each is proven
// into the log's signed checkpoint and judged again, its signatures and
// its signers' authority at the time the log accepted it, as
// LoadAuthority extends a persisted state, and the state index keeps
// them. A refused entry is a *delegation.RecordError with its index:
// another writer appended what this one's state refuses, and Extend
// refuses from then on (the entries stay stored, the state not
// extended: LoadAuthority judges them again); so too when the state of
// the new entries cannot be kept. Errors: those, stateview.Open's.
func (a *Authority) Extend() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.extendErr != nil {
		return a.extendErr
	}
	from := a.State.Size()
	if from == a.Log.Size() {
		return nil
	}
	v, err := stateview.Open(a.Log, a.Key)
	if err != nil {
		return err
	}
	x := NewStateIndexer(a.State, from)
	for i := from; i < v.Checkpoint.Size; i++ {
		applied, err := applyProven(a.State, v, i)
		if err != nil {
			a.extendErr = fmt.Errorf("another writer's entry %d: %w", i, err)
			return a.extendErr
		}
		x.Applied(applied)
	}
	if err := x.Write(a.Log, ledger.StateBinding{Size: v.Checkpoint.Size, Root: v.Checkpoint.Hash}); err != nil {
		a.extendErr = fmt.Errorf("keeping the state of other writers' entries: %w", err)
		return a.extendErr
	}
	a.State.Settle()
	a.State.Persisted(stateview.NewIndex(a.Log))
	a.Checkpoint = v.Checkpoint
	return nil
}
