// Package stateview is what a reader that extends an authority log's
// persisted state (ledger/state.go) instead of replaying the log relies
// on, each part verified before it is used: the log's latest signed
// checkpoint under the reader's key, the binding of its state index
// proven a prefix of that checkpoint's tree, and each entry the reader
// replays proven into it, with the time the log accepted it.
package stateview

import (
	"errors"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"golang.org/x/mod/sumdb/tlog"
)

// View is what a reader that extends a persisted state (instead of
// replaying the log) relies on, each part verified when Open
// returns it: the log's latest signed checkpoint under the reader's key,
// the binding of its state index proven a prefix of that checkpoint's
// tree, and the marked entries below the binding. Entry proves each entry
// the reader replays into the same checkpoint, with the time the log
// accepted it. A View is used by one goroutine.
type View struct {
	// Checkpoint is the log's latest signed checkpoint, verified under
	// the key Open was given; Signed its bytes.
	Checkpoint formats.Checkpoint
	Signed     []byte
	// Binding is the tree the state index covers, proven consistent with
	// Checkpoint (RFC 9162 §2.1.4, from the stored hashes).
	Binding ledger.StateBinding
	// Marks are the entries below Binding.Size that changed the state, in
	// order.
	Marks []Mark

	l       *ledger.Log
	key     *formats.LogKey
	head    time.Time               // Checkpoint's signed time
	cover   formats.TimedCheckpoint // the last history checkpoint verified
	from    int64                   // the entry it was verified for: it covers from there to cover.Size
	covered bool
}

// Open verifies, under k (nil: the key the log stores), what a
// reader extending the log's persisted state relies on, at a cost that
// does not grow with the log (one signature, O(log n) hash reads, the
// marks): the latest signed checkpoint (its signature; its origin and
// size the log's; a *ledger.TrustError when k is not the log's key and did not
// sign it), the end of the checkpoint history (a checkpoint of the log's
// size, signed no later than the latest), and the binding of the state
// index, proven consistent with the checkpoint, and its marks, whose
// digest must be the binding's (ledger.ChainMark). A log without a state
// index, or whose binding or marks do not verify, is a
// *ledger.StateMismatchError (ledger.ErrStateMismatch) saying why: the reader replays
// the whole log instead. A log without a checkpoint history has no state
// index (ledger.ErrHistory). Other errors: an *ledger.IntegrityError, Badger's.
func Open(l *ledger.Log, k *formats.LogKey) (*View, error) {
	if k == nil {
		k = l.Key()
	}
	if !l.HasHistory() {
		return nil, fmt.Errorf("%w: a log without a checkpoint history keeps no state index", ledger.ErrHistory)
	}
	signed, err := l.Checkpoint()
	if err != nil {
		return nil, err
	}
	var cp formats.Checkpoint
	if k.String() == l.VerifierKey() {
		cp, err = formats.OpenCheckpoint(signed, k)
	} else {
		cp, err = ledger.OpenTrusted(signed, k, l.Role()) // a key the reader asserts: a *TrustError when it did not sign
	}
	if err != nil {
		return nil, err
	}
	v := &View{Checkpoint: cp, Signed: signed, l: l, key: k}
	if err := v.checkHead(); err != nil {
		return nil, err
	}
	b, ok, err := NewIndex(l).Binding()
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, &ledger.StateMismatchError{Reason: "the log keeps no state index yet"}
	case b.Size > cp.Size:
		return nil, &ledger.StateMismatchError{Reason: fmt.Sprintf("the binding covers %d entries, the signed checkpoint %d", b.Size, cp.Size)}
	}
	if _, err := l.CheckConsistent(formats.Checkpoint{Origin: cp.Origin, Size: b.Size, Hash: b.Root}, cp); err != nil {
		return nil, &ledger.StateMismatchError{Reason: fmt.Sprintf("the binding (%d entries, root %x) is not a prefix of the signed tree: %v", b.Size, b.Root[:], err)}
	}
	v.Binding = b
	if v.Marks, err = NewIndex(l).Marks(b.Size); err != nil {
		return nil, err
	}
	var d tlog.Hash
	for _, m := range v.Marks {
		d = ledger.ChainMark(d, m.Index, m.Kind)
	}
	if d != b.Marks {
		return nil, &ledger.StateMismatchError{Reason: fmt.Sprintf("the index's %d marks below entry %d are not those its binding was written with (a mark missing, added or changed)", len(v.Marks), b.Size)}
	}
	return v, nil
}

// checkHead checks the signed checkpoint against the stored log, as
// Verify does without reading the entries: origin, size, and the end of
// the history.
func (v *View) checkHead() error {
	l, cp := v.l, v.Checkpoint
	if cp.Origin != l.Origin() {
		return &ledger.IntegrityError{Index: -1, What: "checkpoint origin", Expected: l.Origin(), Found: cp.Origin}
	}
	if size := l.Size(); cp.Size != size {
		return &ledger.IntegrityError{Index: -1, What: "stored size", Expected: fmt.Sprint(cp.Size), Found: fmt.Sprint(size), Detail: "the stored size is not the signed checkpoint's"}
	}
	t, err := formats.CheckpointTime(v.Signed, v.key)
	if err != nil {
		return &ledger.IntegrityError{Index: -1, What: "latest checkpoint time", Detail: ledger.ErrHistory.Error() + ": " + err.Error()}
	}
	v.head = t
	if cp.Size == 0 {
		return nil
	}
	last, err := v.covering(cp.Size - 1)
	if err != nil {
		return err
	}
	if last.Size != cp.Size || t.Before(last.Time) {
		return &ledger.IntegrityError{Index: -1, What: "checkpoint history", Detail: fmt.Sprintf("%v: it does not end at the log's size %d, or the latest checkpoint is signed before its last batch", ledger.ErrHistory, cp.Size)}
	}
	v.covered = false // Entry walks the history from the start
	return nil
}

// Entry returns entry i, proven into the view's signed checkpoint
// (ledger.Log.ProvenEntry), and the time the log accepted it: the signed time of the
// history checkpoint covering it, verified under the view's key, proven
// consistent with the checkpoint, no earlier than the one Entry used
// before (entries are asked for in order) and no later than the latest
// checkpoint's. Errors: an *ledger.IntegrityError (ledger.ErrTampered, with ledger.ErrHistory
// for the history), those of ledger.Log.ProvenEntry.
func (v *View) Entry(i int64) ([]byte, time.Time, error) {
	if i < 0 || i >= v.Checkpoint.Size {
		return nil, time.Time{}, &ledger.IntegrityError{Index: i, What: "entry beyond the signed checkpoint", Expected: fmt.Sprintf("index below %d", v.Checkpoint.Size), Found: fmt.Sprint(i)}
	}
	e, err := v.l.ProvenEntry(i, v.Checkpoint)
	if err != nil {
		return nil, time.Time{}, err
	}
	if v.covered && v.from <= i && i < v.cover.Size {
		return e, v.cover.Time, nil
	}
	prev, had := v.cover, v.covered
	tc, err := v.covering(i)
	if err != nil {
		return nil, time.Time{}, err
	}
	if had && tc.Time.Before(prev.Time) {
		return nil, time.Time{}, &ledger.IntegrityError{Index: i, What: fmt.Sprintf("history checkpoint of size %d", tc.Size), Expected: "a time no earlier than " + prev.Time.UTC().Format(time.RFC3339),
			Found: tc.Time.UTC().Format(time.RFC3339), Detail: ledger.ErrHistory.Error() + ": signed times went backwards"}
	}
	return e, tc.Time, nil
}

// covering reads, verifies and caches the history checkpoint covering
// entry i: the first of the history whose size exceeds i, signed under
// the view's key with a timestamped cosignature, of that size, proven
// consistent with the view's checkpoint, and signed no later than it.
func (v *View) covering(i int64) (formats.TimedCheckpoint, error) {
	size, signed, _, err := v.l.HistoryCovering(i)
	if err != nil {
		return formats.TimedCheckpoint{}, err
	}
	tc, err := v.key.Cosig().Open(signed)
	if err != nil {
		return formats.TimedCheckpoint{}, &ledger.IntegrityError{Index: i, What: fmt.Sprintf("history checkpoint of size %d", size), Detail: fmt.Sprintf("%v: %v", ledger.ErrHistory, err)}
	}
	if tc.Size != size {
		return formats.TimedCheckpoint{}, &ledger.IntegrityError{Index: i, What: "history checkpoint size", Expected: fmt.Sprint(size), Found: fmt.Sprint(tc.Size), Detail: ledger.ErrHistory.Error()}
	}
	if _, err := v.l.CheckConsistent(tc.Checkpoint, v.Checkpoint); err != nil {
		var ie *ledger.InconsistencyError
		if errors.As(err, &ie) {
			return formats.TimedCheckpoint{}, &ledger.IntegrityError{Index: i, What: fmt.Sprintf("history checkpoint of size %d", size), Detail: ledger.ErrHistory.Error() + ": its root is not a prefix of the signed tree: " + ie.Why}
		}
		return formats.TimedCheckpoint{}, err
	}
	if v.head.Before(tc.Time) {
		return formats.TimedCheckpoint{}, &ledger.IntegrityError{Index: i, What: fmt.Sprintf("history checkpoint of size %d", size), Detail: ledger.ErrHistory.Error() + ": signed after the latest checkpoint"}
	}
	v.cover, v.from, v.covered = tc, i, true
	return tc, nil
}
