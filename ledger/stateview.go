package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
)

// StateView is what a reader that extends a persisted state (instead of
// replaying the log) relies on, each part verified when OpenState
// returns it: the log's latest signed checkpoint under the reader's key,
// the binding of its state index proven a prefix of that checkpoint's
// tree, and the marked entries below the binding. Entry proves each entry
// the reader replays into the same checkpoint, with the time the log
// accepted it. A StateView is used by one goroutine.
type StateView struct {
	// Checkpoint is the log's latest signed checkpoint, verified under
	// the key OpenState was given; Signed its bytes.
	Checkpoint formats.Checkpoint
	Signed     []byte
	// Binding is the tree the state index covers, proven consistent with
	// Checkpoint (RFC 9162 §2.1.4, from the stored hashes).
	Binding StateBinding
	// Marks are the entries below Binding.Size that changed the state, in
	// order.
	Marks []StateMark

	l       *Log
	key     *formats.LogKey
	head    time.Time               // Checkpoint's signed time
	cover   formats.TimedCheckpoint // the last history checkpoint verified
	from    int64                   // the entry it was verified for: it covers from there to cover.Size
	covered bool
}

// OpenState verifies, under k (nil: the key the log stores), what a
// reader extending the log's persisted state relies on, at a cost that
// does not grow with the log (one signature, O(log n) hash reads, the
// marks): the latest signed checkpoint (its signature; its origin and
// size the log's; a *TrustError when k is not the log's key and did not
// sign it), the end of the checkpoint history (a checkpoint of the log's
// size, signed no later than the latest), and the binding of the state
// index, proven consistent with the checkpoint. A log without a state
// index, or whose binding or marks do not verify, is a
// *StateMismatchError (ErrStateMismatch) saying why: the reader replays
// the whole log instead. A log without a checkpoint history has no state
// index (ErrHistory). Other errors: an *IntegrityError, Badger's.
func (l *Log) OpenState(k *formats.LogKey) (*StateView, error) {
	if k == nil {
		k = l.lkey
	}
	if !l.history {
		return nil, fmt.Errorf("%w: a log without a checkpoint history keeps no state index", ErrHistory)
	}
	signed, err := l.Checkpoint()
	if err != nil {
		return nil, err
	}
	cp, err := l.openGiven(signed, k)
	if err != nil {
		return nil, err
	}
	v := &StateView{Checkpoint: cp, Signed: signed, l: l, key: k}
	if err := v.checkHead(); err != nil {
		return nil, err
	}
	b, ok, err := l.StateBinding()
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, &StateMismatchError{Reason: "the log keeps no state index yet"}
	case b.Size > cp.Size:
		return nil, &StateMismatchError{Reason: fmt.Sprintf("the binding covers %d entries, the signed checkpoint %d", b.Size, cp.Size)}
	}
	if _, err := l.CheckConsistent(formats.Checkpoint{Origin: cp.Origin, Size: b.Size, Hash: b.Root}, cp); err != nil {
		return nil, &StateMismatchError{Reason: fmt.Sprintf("the binding (%d entries, root %x) is not a prefix of the signed tree: %v", b.Size, b.Root[:], err)}
	}
	v.Binding = b
	if v.Marks, err = l.Marks(b.Size); err != nil {
		return nil, err
	}
	return v, nil
}

// checkHead checks the signed checkpoint against the stored log, as
// Verify does without reading the entries: origin, size, and the end of
// the history.
func (v *StateView) checkHead() error {
	l, cp := v.l, v.Checkpoint
	if cp.Origin != l.origin {
		return &IntegrityError{Index: -1, What: "checkpoint origin", Expected: l.origin, Found: cp.Origin}
	}
	if size := l.Size(); cp.Size != size {
		return &IntegrityError{Index: -1, What: "stored size", Expected: fmt.Sprint(cp.Size), Found: fmt.Sprint(size), Detail: "the stored size is not the signed checkpoint's"}
	}
	t, err := formats.CheckpointTime(v.Signed, v.key)
	if err != nil {
		return &IntegrityError{Index: -1, What: "latest checkpoint time", Detail: ErrHistory.Error() + ": " + err.Error()}
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
		return &IntegrityError{Index: -1, What: "checkpoint history", Detail: fmt.Sprintf("%v: it does not end at the log's size %d, or the latest checkpoint is signed before its last batch", ErrHistory, cp.Size)}
	}
	v.covered = false // Entry walks the history from the start
	return nil
}

// Entry returns entry i, proven into the view's signed checkpoint
// (ProvenEntry), and the time the log accepted it: the signed time of the
// history checkpoint covering it, verified under the view's key, proven
// consistent with the checkpoint, no earlier than the one Entry used
// before (entries are asked for in order) and no later than the latest
// checkpoint's. Errors: an *IntegrityError (ErrTampered, with ErrHistory
// for the history), those of ProvenEntry.
func (v *StateView) Entry(i int64) ([]byte, time.Time, error) {
	if i < 0 || i >= v.Checkpoint.Size {
		return nil, time.Time{}, &IntegrityError{Index: i, What: "entry beyond the signed checkpoint", Expected: fmt.Sprintf("index below %d", v.Checkpoint.Size), Found: fmt.Sprint(i)}
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
		return nil, time.Time{}, &IntegrityError{Index: i, What: fmt.Sprintf("history checkpoint of size %d", tc.Size), Expected: "a time no earlier than " + prev.Time.UTC().Format(time.RFC3339),
			Found: tc.Time.UTC().Format(time.RFC3339), Detail: ErrHistory.Error() + ": signed times went backwards"}
	}
	return e, tc.Time, nil
}

// covering reads, verifies and caches the history checkpoint covering
// entry i: the first of the history whose size exceeds i, signed under
// the view's key with a timestamped cosignature, of that size, proven
// consistent with the view's checkpoint, and signed no later than it.
func (v *StateView) covering(i int64) (formats.TimedCheckpoint, error) {
	var size int64
	var signed []byte
	err := v.l.db.View(func(txn Txn) error {
		it := txn.Iterate([]byte{prefixHistory})
		defer it.Close()
		it.Seek(historyKey(i + 1))
		if !it.Valid() {
			return &IntegrityError{Index: i, What: "checkpoint history", Detail: ErrHistory.Error() + ": no checkpoint covers the entry"}
		}
		k := it.Key()
		if len(k) != 9 {
			return &IntegrityError{Index: -1, What: "checkpoint history key", Found: fmt.Sprintf("%x", k)}
		}
		size = int64(binary.BigEndian.Uint64(k[1:]))
		val, err := it.Value()
		signed = bytes.Clone(val)
		return err
	})
	if err != nil {
		return formats.TimedCheckpoint{}, err
	}
	tc, err := v.key.Cosig().Open(signed)
	if err != nil {
		return formats.TimedCheckpoint{}, &IntegrityError{Index: i, What: fmt.Sprintf("history checkpoint of size %d", size), Detail: fmt.Sprintf("%v: %v", ErrHistory, err)}
	}
	if tc.Size != size {
		return formats.TimedCheckpoint{}, &IntegrityError{Index: i, What: "history checkpoint size", Expected: fmt.Sprint(size), Found: fmt.Sprint(tc.Size), Detail: ErrHistory.Error()}
	}
	if _, err := v.l.CheckConsistent(tc.Checkpoint, v.Checkpoint); err != nil {
		var ie *InconsistencyError
		if errors.As(err, &ie) {
			return formats.TimedCheckpoint{}, &IntegrityError{Index: i, What: fmt.Sprintf("history checkpoint of size %d", size), Detail: ErrHistory.Error() + ": its root is not a prefix of the signed tree: " + ie.Why}
		}
		return formats.TimedCheckpoint{}, err
	}
	if v.head.Before(tc.Time) {
		return formats.TimedCheckpoint{}, &IntegrityError{Index: i, What: fmt.Sprintf("history checkpoint of size %d", size), Detail: ErrHistory.Error() + ": signed after the latest checkpoint"}
	}
	v.cover, v.from, v.covered = tc, i, true
	return tc, nil
}
