package verify

import (
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/stateview"
	"github.com/writ-ledger/writ/verify/internal/replay"
)

// maxTail bounds the entries past a persisted state's binding that
// LoadAuthority proves and replays one by one (an inclusion proof each):
// a batch, as a writer that does not keep the index leaves them (a sync
// killed after storing its entries, before their keys). Past it a full
// replay, which reads the log once, is the cheaper way.
const maxTail = ledger.MaxBatchEntries

// loadPersisted extends the log's persisted authority state
// (stateview.Open): it replays, fully checked at the time the log
// accepted each, the marked entries below the binding (the records that
// changed the state), then every entry after it, each proven into the
// signed checkpoint, and, on a log open for writing, writes the new
// entries' keys and moves the binding. Duplicates are judged against the
// persisted content keys. A state it cannot use is a
// *ledger.StateMismatchError; a refused entry its *delegation.RecordError.
func loadPersisted(log *ledger.Log, k *formats.LogKey) (*Authority, error) {
	v, err := stateview.Open(log, k)
	if err != nil {
		return nil, err
	}
	b, cp := v.Binding, v.Checkpoint
	if tail := cp.Size - b.Size; tail > maxTail {
		return nil, &ledger.StateMismatchError{Reason: fmt.Sprintf("%d entries past the binding: a full replay reads them faster", tail)}
	}
	if b.Size > 0 && (len(v.Marks) == 0 || v.Marks[0].Index != 0) {
		return nil, &ledger.StateMismatchError{Reason: "entry 0 (the first root) is not marked"}
	}
	st := delegation.NewStateOver(stateview.NewIndex(log))
	for _, m := range v.Marks {
		a, err := applyProven(st, v, m.Index)
		if err != nil {
			return nil, err
		}
		if string(a.Kind) != m.Kind {
			return nil, &ledger.StateMismatchError{Reason: fmt.Sprintf("entry %d is marked as %s and is %s", m.Index, aRecord(m.Kind), aRecord(string(a.Kind)))}
		}
	}
	if err := st.Skip(b.Size); err != nil {
		return nil, err
	}
	st.Persisted(stateview.NewIndex(log)) // the marked entries' content keys are the index's
	x := NewStateIndexer(st, b.Size)
	for i := b.Size; i < cp.Size; i++ {
		a, err := applyProven(st, v, i)
		if err != nil {
			return nil, err
		}
		x.Applied(a)
	}
	a := &Authority{Log: log, State: st, Checkpoint: cp, Key: k, persisted: !log.ReadOnly()}
	if cp.Size > b.Size && !log.ReadOnly() {
		if err := x.Write(log, ledger.StateBinding{Size: cp.Size, Root: cp.Hash}); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// applyProven applies entry i of the view, proven into its checkpoint,
// at the time the log accepted it.
func applyProven(st *delegation.State, v *stateview.View, i int64) (*delegation.Applied, error) {
	if err := st.Skip(i); err != nil {
		return nil, err
	}
	e, at, err := v.Entry(i)
	if err != nil {
		return nil, err
	}
	return st.ApplyPrepared(delegation.Prepare(e, st.Directory), at)
}

// loadReplayed verifies the whole log under k and replays every entry
// into a fresh state (LoadAuthority's full path), and, on a log open for
// writing, writes the state index from it: the old index dropped, every
// entry's keys, the binding last.
func loadReplayed(log *ledger.Log, k *formats.LogKey) (*Authority, error) {
	st := delegation.NewState()
	x := NewStateIndexer(st, 0)
	fn, wait := replay.Apply(st, x.Applied)
	cp, err := log.Verify(k, fn)
	if werr := wait(); werr != nil {
		err = werr // the entry's own refusal, with its index
	}
	if err != nil {
		return nil, err
	}
	a := &Authority{Log: log, State: st, Checkpoint: cp, Key: k}
	if log.ReadOnly() {
		return a, nil
	}
	if err := stateview.NewIndex(log).Drop(); err != nil {
		return nil, err
	}
	if err := x.Write(log, ledger.StateBinding{Size: cp.Size, Root: cp.Hash}); err != nil {
		return nil, err
	}
	a.persisted = true
	return a, nil
}

// replayInstead reports whether err from loadPersisted leaves a full
// replay to decide, and why: anything but a checkpoint the caller's key
// did not sign (the same refusal either way). A refused or unproven
// entry is judged again by the full replay, which names the first
// failure in log order, as it always has.
func replayInstead(err error) (bool, string) {
	var te *ledger.TrustError
	var me *ledger.StateMismatchError
	switch {
	case errors.As(err, &te):
		return false, ""
	case errors.As(err, &me):
		return true, me.Reason
	}
	return true, err.Error()
}

// RebuildState verifies and replays the whole authority log of the
// ledger directory d under k (nil: the key it stores), as LoadAuthority
// does when the persisted state cannot be used, and writes the state
// index again from that replay (the old one dropped): what `writ ledger
// verify --rebuild-state` runs after a *StateDivergenceError. It opens
// the log for writing, waiting for another writer for up to
// ledgerdir.WriterLockWait. Errors: the log not opened, as a
// *ledgerdir.OpenError; the replay's (an *ledger.IntegrityError, a
// *delegation.RecordError, a *ledger.TrustError), which leave the index
// as it was.
func RebuildState(d ledgerdir.Dir, k *formats.LogKey) error {
	l, err := ledgerdir.OpenWaiting(d.AuthorityStore(), nil, ledgerdir.WriterLockWait)
	if err != nil {
		return &ledgerdir.OpenError{Err: err}
	}
	defer l.Close()
	if err := replay.RequireHistory(l); err != nil {
		return err
	}
	if k == nil {
		k = l.Key()
	}
	_, err = loadReplayed(l, k)
	return err
}
