package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/internal/merkle"
	"golang.org/x/mod/sumdb/tlog"
)

// ErrTampered is wrapped by every *IntegrityError: the stored log is not
// the log its signed checkpoint commits to.
var ErrTampered = errors.New("ledger integrity check failed")

// IntegrityError is the evidence of one integrity failure found by
// Log.Verify: which entry (or tree node), what was expected and what was
// found. Index is -1 when the failure is not tied to one entry.
type IntegrityError struct {
	Index    int64  // entry index, or -1
	What     string // what failed, e.g. "leaf hash"
	Expected string // the value the check required
	Found    string // the value recomputed or read
	Detail   string // a sentence for the operator
}

// Error returns "entry N: what: expected X, found Y (detail)".
func (e *IntegrityError) Error() string {
	s := e.What
	if e.Index >= 0 {
		s = fmt.Sprintf("entry %d: %s", e.Index, e.What)
	}
	if e.Expected != "" || e.Found != "" {
		s += fmt.Sprintf(": expected %s, found %s", e.Expected, e.Found)
	}
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Unwrap returns ErrTampered.
func (e *IntegrityError) Unwrap() error { return ErrTampered }

// EntryFunc is called by Verify with each entry, in order, after its leaf
// hash has been checked, and the time the log accepted it: the signed
// time of the first history checkpoint covering it, for a log that keeps
// a checkpoint history (zero otherwise). The slice is valid only during
// the call. A non-nil error stops verification and is returned.
type EntryFunc func(index int64, entry []byte, accepted time.Time) error

// Verify checks the whole log against its latest signed checkpoint, which
// must verify under k (the log key the caller trusts; nil: the one the
// log stores) (ErrCheckpointSignature otherwise): the
// checkpoint's origin and size match the log's; every entry from 0 to
// size-1 is present and nothing lies beyond; every leaf hash recomputed
// from the entry's bytes and every interior hash recomputed from those
// equal the stored tree hashes; and the recomputed root equals the
// checkpoint's root hash. For a log with a checkpoint history, every
// history checkpoint's timestamped signature verifies under k, its
// root is the root recomputed at its size, the times never decrease, the
// history ends at the log's size, and the latest checkpoint is signed no
// earlier than the last of it. Each entry is passed to fn (if not nil) as
// it is read, with the time it was accepted. The first failure is
// returned as an *IntegrityError (wrapping ErrTampered) naming the index;
// a checkpoint that no signature of k signs, when k is not the key
// the log stores, is a *TrustError (rules.VKeyMismatch) naming both.
// Memory does not grow with the log.
func (l *Log) Verify(k *formats.LogKey, fn EntryFunc) (formats.Checkpoint, error) {
	if k == nil {
		k = l.lkey
	}
	cp, err := l.verify(k, fn)
	return cp, l.diagnose(err)
}

// diagnose returns err, tamper evidence found reading the store, or a
// *StoreError naming the table when one does not read back: a damaged
// block can end Badger's iteration early, which reads as an entry
// missing.
func (l *Log) diagnose(err error) error {
	if errors.Is(err, ErrTampered) && !errors.Is(err, ErrStoreDamaged) {
		if s, ok := l.db.(interface{ damagedTable(error) error }); ok {
			if serr := s.damagedTable(err); serr != nil {
				return serr
			}
		}
	}
	return err
}

// verify is Verify without the damaged-table diagnosis: the checkpoint
// against the log's origin and size, then the walk over every entry
// (walk), then the recomputed root against the checkpoint's.
func (l *Log) verify(k *formats.LogKey, fn EntryFunc) (formats.Checkpoint, error) {
	signed, err := l.Checkpoint()
	if err != nil {
		return formats.Checkpoint{}, err
	}
	cp, err := l.openGiven(signed, k)
	if err != nil {
		return formats.Checkpoint{}, err
	}
	size := l.Size()
	if cp.Origin != l.origin {
		return cp, &IntegrityError{Index: -1, What: "checkpoint origin", Expected: l.origin, Found: cp.Origin}
	}
	if cp.Size != size {
		detail := "the stored size is not the signed checkpoint's"
		if size > cp.Size {
			detail += "; an import or sync that was interrupted leaves entries past the checkpoint: running it again drops them first"
		}
		return cp, &IntegrityError{Index: -1, What: "stored size", Expected: fmt.Sprint(cp.Size), Found: fmt.Sprint(size), Detail: detail}
	}
	w := verifyWalk{l: l, key: k, signed: signed, size: size, fn: fn}
	if err := l.db.View(w.walk); err != nil {
		return cp, err
	}
	if w.next != size {
		return cp, &IntegrityError{Index: w.next, What: "entry missing", Detail: fmt.Sprintf("the checkpoint covers %d entries, %d are stored", size, w.next)}
	}
	root := w.tree.Root()
	if !bytes.Equal(root[:], cp.Hash[:]) {
		return cp, &IntegrityError{Index: -1, What: "root hash", Expected: hexHash(cp.Hash), Found: hexHash(root),
			Detail: fmt.Sprintf("the root recomputed from %d entries is not the signed checkpoint's", size)}
	}
	return cp, nil
}

// verifyWalk is one walk of verify over a log's entries, in one read
// transaction: the tree recomputed so far and the next index expected.
type verifyWalk struct {
	l      *Log
	key    *formats.LogKey
	signed []byte // the latest signed checkpoint
	size   int64  // the log's size, the checkpoint's
	fn     EntryFunc

	tree   TreeBuilder
	next   int64          // the index of the next entry expected
	stored *merkle.Cursor // the stored tree hashes
	hist   *historyReader // the checkpoint history, nil without one
	read   int            // bytes read since the mapped pages were last released
}

// walk reads every stored entry in order within txn, checking that the
// indices run from 0 without a gap or an entry past size, each entry
// (entry), and, for a log with a history, that the history ends at size
// and the latest checkpoint is signed no earlier than its last batch.
func (w *verifyWalk) walk(txn Txn) error {
	it := txn.Iterate([]byte{prefixEntry})
	defer it.Close()
	w.stored = newHashCursor(txn)
	defer w.stored.It.Close()
	if w.l.history {
		var err error
		if w.hist, err = newHistoryReader(txn, w.key); err != nil {
			return err
		}
		defer w.hist.close()
	}
	release, _ := w.l.db.(interface{ releaseMapped() })
	for ; it.Valid(); it.Next() {
		if release != nil && w.read >= releaseEvery {
			release.releaseMapped()
			w.read = 0
		}
		k := it.Key()
		if len(k) != 9 {
			return &IntegrityError{Index: -1, What: "entry key", Expected: "a 9-byte entry key", Found: fmt.Sprintf("%x", k), Detail: "a stored key that is not an entry index"}
		}
		i := int64(binary.BigEndian.Uint64(k[1:]))
		if i != w.next {
			if i >= w.size {
				return &IntegrityError{Index: i, What: "entry beyond the checkpoint", Detail: fmt.Sprintf("the log holds %d entries", w.size)}
			}
			return &IntegrityError{Index: w.next, What: "entry missing", Detail: fmt.Sprintf("the next stored entry is %d", i)}
		}
		if i >= w.size {
			return &IntegrityError{Index: i, What: "entry beyond the checkpoint", Detail: fmt.Sprintf("the log holds %d entries", w.size)}
		}
		var accepted time.Time
		var covering formats.TimedCheckpoint
		if w.hist != nil {
			var err error
			if covering, err = w.hist.covering(i); err != nil {
				return err
			}
			accepted = covering.Time
		}
		v, err := it.Value()
		if err != nil {
			return err
		}
		if err := w.entry(i, v, covering, accepted); err != nil {
			return err
		}
		w.next++
	}
	if w.hist != nil {
		if err := w.hist.finish(w.size); err != nil {
			return err
		}
		if t, err := formats.CheckpointTime(w.signed, w.key); err != nil || (w.size > 0 && t.Before(w.hist.last)) {
			return &IntegrityError{Index: -1, What: "latest checkpoint time", Detail: ErrHistory.Error() + ": the latest checkpoint is signed before the last batch, or carries no signed time"}
		}
	}
	return nil
}

// entry checks entry i, whose bytes are v: the tree hashes it adds,
// recomputed, equal the stored ones (leaf first); when it completes the
// history checkpoint covering it, the recomputed root is that
// checkpoint's. Then it passes the entry to fn, with the time accepted.
func (w *verifyWalk) entry(i int64, v []byte, covering formats.TimedCheckpoint, accepted time.Time) error {
	w.read += len(v) + 128 // the entry, its hashes and their keys
	// Recompute the hashes this entry adds, in storage order.
	produced := w.tree.Add(tlog.RecordHash(v))
	base := tlog.StoredHashIndex(0, i)
	idx := make([]int64, len(produced))
	for j := range idx {
		idx[j] = base + int64(j)
	}
	have, err := w.stored.ReadHashes(idx)
	if err != nil {
		return &IntegrityError{Index: i, What: "tree hash missing", Detail: err.Error()}
	}
	for j := range produced {
		if have[j] == produced[j] {
			continue
		}
		if j == 0 {
			return &IntegrityError{Index: i, What: "leaf hash", Expected: hexHash(have[j]), Found: hexHash(produced[j]),
				Detail: "the entry's bytes, or its stored leaf hash, changed after it was appended"}
		}
		return &IntegrityError{Index: i, What: fmt.Sprintf("tree hash at level %d", j), Expected: hexHash(have[j]), Found: hexHash(produced[j]),
			Detail: "the stored tree hash differs from the hash recomputed from the entries"}
	}
	if w.hist != nil && i+1 == covering.Size {
		if root := w.tree.Root(); root != covering.Hash {
			return &IntegrityError{Index: i, What: fmt.Sprintf("history checkpoint of size %d", covering.Size), Expected: hexHash(covering.Hash), Found: hexHash(root),
				Detail: ErrHistory.Error() + ": its root is not the root recomputed from the entries"}
		}
	}
	if w.fn != nil {
		return w.fn(i, v, accepted)
	}
	return nil
}

// releaseEvery is how many bytes of the log Verify reads between two
// releases of the store's mapped pages (see releaseMapped).
const releaseEvery = 32 << 20

func hexHash(h tlog.Hash) string { return fmt.Sprintf("%x", h[:]) }

// openGiven verifies the log's signed checkpoint under k. A key other
// than the log's own is a reader's assertion: a checkpoint it did not
// sign is a *TrustError (rules.VKeyMismatch) listing the keys that did.
func (l *Log) openGiven(signed []byte, k *formats.LogKey) (formats.Checkpoint, error) {
	if k.String() == l.vkey {
		return formats.OpenCheckpoint(signed, k)
	}
	return OpenTrusted(signed, k, l.Role())
}

// Role names the log for evidence ("authority" or "decisions"): an authority log keeps a checkpoint
// history, a decision log does not.
func (l *Log) Role() string {
	if l.history {
		return "authority"
	}
	return "decisions"
}
