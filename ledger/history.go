package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
)

// A log with a checkpoint history (the authority log) keeps, beside its
// entries, the signed checkpoint of every batch it committed: the first
// checkpoint of each size, under prefixHistory and the size. Each is
// signed by the log key with a timestamped cosignature (formats.NewCosigner), so
// the history proves when the log accepted every entry: entry i was
// accepted at the signed time of the first checkpoint whose size exceeds
// i (the checkpoint of the batch that added it). The writer judges a
// batch's records at exactly that time, and a reader of the log, a
// replica or an export replays them at the same time, so all reach the
// same verdict. Times never decrease along the history.

const prefixHistory = 'c'

// keyHistoryFlag marks a log created with a checkpoint history.
var keyHistoryFlag = []byte("m/history")

// ErrHistory is wrapped by every error about a checkpoint history that
// is missing, malformed or does not verify (with ErrTampered when the
// stored log is at fault).
var ErrHistory = errors.New("checkpoint history does not verify")

// HasHistory reports whether the log keeps a checkpoint history, which
// gives every entry the time the log accepted it.
func (l *Log) HasHistory() bool { return l.history }

func historyKey(size int64) []byte { return indexKey(prefixHistory, size) }

// historyReader walks a log's checkpoint history in size order alongside
// its entries, verifying each checkpoint as it is first needed.
type historyReader struct {
	it   Iterator
	v    *formats.CosigVerifier
	cur  formats.TimedCheckpoint // covers the entries below cur.Size
	last time.Time               // the previous checkpoint's time
	have bool
}

func newHistoryReader(txn Txn, k *formats.LogKey) (*historyReader, error) {
	return &historyReader{it: txn.Iterate([]byte{prefixHistory}), v: k.Cosig()}, nil
}

func (h *historyReader) close() { h.it.Close() }

// covering returns the checkpoint that covers entry i: the first of the
// history whose size exceeds i, verified, with a time no earlier than
// the one before it.
func (h *historyReader) covering(i int64) (formats.TimedCheckpoint, error) {
	for !h.have || h.cur.Size <= i {
		if !h.it.Valid() {
			return formats.TimedCheckpoint{}, &IntegrityError{Index: i, What: "checkpoint history", Detail: fmt.Sprintf("%v: no checkpoint covers the entry", ErrHistory)}
		}
		k := h.it.Key()
		if len(k) != 9 {
			return formats.TimedCheckpoint{}, &IntegrityError{Index: -1, What: "checkpoint history key", Found: fmt.Sprintf("%x", k)}
		}
		size := int64(binary.BigEndian.Uint64(k[1:]))
		signed, err := h.it.Value()
		if err != nil {
			return formats.TimedCheckpoint{}, err
		}
		tc, err := h.v.Open(signed)
		if err != nil {
			return formats.TimedCheckpoint{}, &IntegrityError{Index: i, What: fmt.Sprintf("history checkpoint of size %d", size), Detail: fmt.Sprintf("%v: %v", ErrHistory, err)}
		}
		switch {
		case tc.Size != size:
			return formats.TimedCheckpoint{}, &IntegrityError{Index: i, What: "history checkpoint size", Expected: fmt.Sprint(size), Found: fmt.Sprint(tc.Size), Detail: ErrHistory.Error()}
		case h.have && tc.Time.Before(h.last):
			return formats.TimedCheckpoint{}, &IntegrityError{Index: i, What: fmt.Sprintf("history checkpoint of size %d", size), Expected: "a time no earlier than " + h.last.UTC().Format(time.RFC3339),
				Found: tc.Time.UTC().Format(time.RFC3339), Detail: ErrHistory.Error() + ": signed times went backwards"}
		}
		h.cur, h.last, h.have = tc, tc.Time, true
		h.it.Next()
	}
	return h.cur, nil
}

// finish checks that the history ends exactly at size (the last batch's
// checkpoint) and that nothing lies beyond it.
func (h *historyReader) finish(size int64) error {
	if size == 0 {
		if h.it.Valid() {
			return &IntegrityError{Index: -1, What: "checkpoint history", Detail: ErrHistory.Error() + ": checkpoints for an empty log"}
		}
		return nil
	}
	if !h.have || h.cur.Size != size {
		return &IntegrityError{Index: -1, What: "checkpoint history", Detail: fmt.Sprintf("%v: it does not end at the log's size %d", ErrHistory, size)}
	}
	if h.it.Valid() {
		return &IntegrityError{Index: -1, What: "checkpoint history", Detail: fmt.Sprintf("%v: a checkpoint beyond the log's size %d", ErrHistory, size)}
	}
	return nil
}

// HistoryCovering returns the history checkpoint covering entry i, as
// stored (not verified): the first of the history whose size exceeds i,
// with that size, and whether entry i starts its batch (i is 0, or a
// checkpoint of size i exists). Errors: an *IntegrityError (ErrHistory)
// when none covers i, or its key is malformed.
func (l *Log) HistoryCovering(i int64) (size int64, signed []byte, starts bool, err error) {
	err = l.db.View(func(txn Txn) error {
		it := txn.Iterate([]byte{prefixHistory})
		defer it.Close()
		it.Seek(historyKey(i + 1))
		if !it.Valid() {
			return &IntegrityError{Index: i, What: "checkpoint history", Detail: ErrHistory.Error() + ": no checkpoint covers the entry"}
		}
		if size = historySize(it.Key()); size < 0 {
			return &IntegrityError{Index: -1, What: "checkpoint history key", Found: fmt.Sprintf("%x", it.Key())}
		}
		v, err := it.Value()
		if err != nil {
			return err
		}
		signed, starts = bytes.Clone(v), i == 0
		if i > 0 {
			if _, err := txn.Get(historyKey(i)); err == nil {
				starts = true
			} else if !errors.Is(err, ErrNoKey) {
				return err
			}
		}
		return nil
	})
	return size, signed, starts, err
}

// deleteHistoryAfter deletes, in txn, every history checkpoint of a size
// above n: those of entries a truncation removes, and those a copy that
// spanned transactions stored ahead of its entries.
func deleteHistoryAfter(txn Txn, n int64) error {
	it := txn.Iterate([]byte{prefixHistory})
	var keys [][]byte
	for it.Seek(historyKey(n + 1)); it.Valid(); it.Next() {
		keys = append(keys, bytes.Clone(it.Key()))
	}
	it.Close()
	for _, k := range keys {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
