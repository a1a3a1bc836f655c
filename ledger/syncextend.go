package ledger

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// extend fetches, proves, checks and stores the entries past the
// replica's size; on any failure it removes what it stored.
func (s *syncer) extend() (err error) {
	l := s.l
	before := s.local.Size
	defer func() {
		if err != nil {
			if rerr := l.truncateTo(before); rerr != nil {
				err = fmt.Errorf("%w; removing the partial copy also failed: %w", err, rerr)
			}
		}
	}()
	txn := l.db.Begin()
	defer func() { txn.Discard() }()
	tb, err := l.compactRange(txn, before)
	if err != nil {
		return err
	}
	h := &historyQueue{s: s, next: before / tiles.Width}
	if l.history && before > 0 {
		v, err := txn.Get(historyKey(before))
		if err != nil {
			return &IntegrityError{Index: before - 1, What: "checkpoint history", Detail: ErrHistory.Error() + ": the replica's last batch has no checkpoint"}
		}
		last, err := s.cv.Open(v)
		if err != nil {
			return err
		}
		h.last = last.Time
	}
	r := txnHashReader(txn)
	pending := 0
	var checkErr error // a refusal by the checks, held until its batch is proven
	var checkEnd int64
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	bundles := s.prefetch(ctx, before/tiles.Width)
	for n := before / tiles.Width; n*tiles.Width < s.remote.Size; n++ {
		w := int(min(tiles.Width, s.remote.Size-n*tiles.Width))
		f, ok := <-bundles
		if !ok {
			return s.finishChecks(fmt.Errorf("%w: %v", tiles.ErrFetch, ctx.Err()))
		}
		t, data, err := f.t, f.data, f.err
		s.res.Requests++
		s.res.Bytes += int64(len(data))
		if err != nil {
			return s.finishChecks(err)
		}
		entries, err := tiles.ParseBundle(data, w)
		if err != nil {
			return s.finishChecks(&SourceError{Path: t.Path(), Index: -1, Checkpoint: s.remote, What: err.Error()})
		}
		for j, e := range entries {
			i := n*tiles.Width + int64(j)
			leaf := tlog.RecordHash(e)
			if i < before {
				stored, err := r.ReadHashes([]int64{tlog.StoredHashIndex(0, i)})
				if err != nil {
					return err
				}
				if stored[0] != leaf {
					return s.finishChecks(s.mismatch(&SourceError{Path: t.Path(), Index: i, What: "an entry the replica holds differs",
						Expected: "leaf hash " + hexHash(stored[0]), Found: "leaf hash " + hexHash(leaf)}))
				}
				continue
			}
			var accepted time.Time
			var cover TimedCheckpoint
			if l.history {
				if cover, err = h.covering(i); err != nil {
					return s.finishChecks(err)
				}
				accepted = cover.Time
			}
			if err := putEntry(txn, i, e, tb.Add(leaf)); err != nil {
				return err
			}
			s.opts.Progress.tick(i+1-before, s.remote.Size-before)
			pending += len(e) + 64
			if l.history && cover.Size == i+1 {
				if root := tb.Root(); root != cover.Hash {
					return s.finishChecks(s.mismatch(&SourceError{Path: t.Path(), Index: i,
						What:     fmt.Sprintf("the entries up to this one do not hash to the signed history checkpoint of size %d", cover.Size),
						Expected: "root " + hexHash(cover.Hash), Found: "root " + hexHash(root)}))
				}
				if err := txn.Set(historyKey(cover.Size), cover.Signed); err != nil {
					return batchErr(err)
				}
			}
			// A record the checks refuse is reported once the batch that
			// holds it is proven to be the signed one: until then a
			// forged entry is the source's fault, not the writer's.
			if s.fn != nil && checkErr == nil {
				if err := s.fn(i, e, accepted); err != nil {
					checkErr, checkEnd = err, s.remote.Size
					if l.history {
						checkEnd = cover.Size
					}
				}
			}
			if checkErr != nil && i+1 >= checkEnd {
				return s.finishChecks(checkErr)
			}
			if pending >= MaxBatchBytes/2 {
				if err := txn.Set(keySize, sizeBytes(i+1)); err != nil {
					return batchErr(err)
				}
				if err := batchErr(txn.Commit()); err != nil {
					return err
				}
				l.size.Store(i + 1)
				txn = l.db.Begin()
				r, pending = txnHashReader(txn), 0
			}
		}
	}
	if root := tb.Root(); root != s.remote.Hash {
		return s.finishChecks(s.mismatch(&SourceError{Path: "checkpoint", Index: -1, What: "the published entries do not hash to the signed root",
			Expected: "root " + hexHash(s.remote.Hash), Found: "root " + hexHash(root)}))
	}
	if l.history && (!h.have || h.cur.Size != s.remote.Size) {
		return s.finishChecks(&SourceError{Path: h.lastPath, Index: -1, Checkpoint: s.remote, What: ErrHistory.Error() + ": the history does not end at the checkpoint's size"})
	}
	if err := s.finishChecks(nil); err != nil {
		return err
	}
	if err := s.checkDeferred(r); err != nil {
		return err
	}
	// What Verify requires of the latest checkpoint, so that the replica
	// never stores what it would then refuse to read.
	if t, err := CheckpointTime(s.remoteSigned, l.vkey); err != nil || (l.history && t.Before(h.last)) {
		return &SourceError{Path: "checkpoint", Index: -1, Checkpoint: s.remote,
			What: ErrHistory.Error() + ": the checkpoint carries no signed time, or one before the last batch's"}
	}
	if err := txn.Set(keySize, sizeBytes(s.remote.Size)); err != nil {
		return batchErr(err)
	}
	if err := txn.Set(keyCheckpoint, s.remoteSigned); err != nil {
		return batchErr(err)
	}
	if err := setCosigned(txn, s.remoteSigned, s.remoteFull); err != nil {
		return err
	}
	if err := batchErr(txn.Commit()); err != nil {
		return err
	}
	l.size.Store(s.remote.Size)
	s.res.After, s.res.Checkpoint, s.res.Signed = s.remote.Size, s.remote, s.remoteFull
	return nil
}

// fetched is one entry bundle as prefetch read it.
type fetched struct {
	t    tiles.Tile
	data []byte
	err  error
}

// prefetchDepth is how many entry bundles are fetched ahead of the one
// being checked, so that the network and the source overlap the hashing
// and the authority checks.
const prefetchDepth = 8

// prefetch fetches the entry bundles from tile first to the published
// size, in order, a few ahead of the reader, until ctx ends or a fetch
// fails (which is sent, and ends it).
func (s *syncer) prefetch(ctx context.Context, first int64) <-chan fetched {
	ch := make(chan fetched, prefetchDepth)
	go func() {
		defer close(ch)
		for n := first; n*tiles.Width < s.remote.Size; n++ {
			w := int(min(tiles.Width, s.remote.Size-n*tiles.Width))
			t := tiles.Tile{Kind: tiles.KindEntries, Level: -1, N: n, W: w}
			data, err := s.src.Get(ctx, t.Path(), int64(w)*(2+MaxEntrySize))
			select {
			case ch <- fetched{t, data, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// historyQueue reads history bundles ahead of the entries, in tile
// order, and hands out the checkpoint covering each new entry.
type historyQueue struct {
	s        *syncer
	next     int64 // the next history bundle to fetch
	queue    []TimedCheckpoint
	cur      TimedCheckpoint
	have     bool
	last     time.Time
	lastPath string
}

// covering returns the first history checkpoint whose size exceeds i,
// fetching history bundles as needed.
func (h *historyQueue) covering(i int64) (TimedCheckpoint, error) {
	for !h.have || h.cur.Size <= i {
		for len(h.queue) == 0 {
			if err := h.fetch(i); err != nil {
				return TimedCheckpoint{}, err
			}
		}
		h.cur, h.have, h.queue = h.queue[0], true, h.queue[1:]
	}
	return h.cur, nil
}

// fetch reads the next history bundle and queues its checkpoints past the
// replica's size, verified: signed by the log key, sizes increasing
// within the tile, times never decreasing; those the replica holds must
// be the ones it holds.
func (h *historyQueue) fetch(i int64) error {
	s := h.s
	if h.next*tiles.Width >= s.remote.Size {
		return &SourceError{Path: h.lastPath, Index: i, Checkpoint: s.remote, What: ErrHistory.Error() + ": no history checkpoint covers the entry"}
	}
	w := int(min(tiles.Width, s.remote.Size-h.next*tiles.Width))
	t := tiles.Tile{Kind: tiles.KindHistory, Level: -1, N: h.next, W: w}
	h.next++
	h.lastPath = t.Path()
	data, err := s.get(t, tiles.Width*(2+MaxCheckpointSize))
	if err != nil {
		return err
	}
	var cps [][]byte
	if len(data) > 0 {
		if cps, err = tiles.ParseBundle(data, -1); err != nil {
			return &SourceError{Path: t.Path(), Index: -1, Checkpoint: s.remote, What: err.Error()}
		}
	}
	lo, hi := t.N*tiles.Width, t.N*tiles.Width+int64(w)
	prev := lo
	for _, b := range cps {
		tc, err := s.cv.Open(b)
		if err == nil {
			err = canonicalHistory(b, s.l.vkey)
		}
		if err != nil {
			return &SourceError{Path: t.Path(), Index: -1, Checkpoint: s.remote, What: fmt.Sprintf("%v: %v", ErrHistory, err)}
		}
		if tc.Size <= prev || tc.Size > hi {
			return &SourceError{Path: t.Path(), Index: -1, Checkpoint: s.remote, What: ErrHistory.Error() + ": a checkpoint outside the tile, or out of order",
				Expected: fmt.Sprintf("a size in %d..%d above %d", lo+1, hi, prev), Found: fmt.Sprint(tc.Size)}
		}
		prev = tc.Size
		if tc.Size <= s.local.Size {
			if err := h.same(tc, t.Path()); err != nil {
				return err
			}
			continue
		}
		if tc.Time.Before(h.last) {
			return &SourceError{Path: t.Path(), Index: tc.Size - 1, Checkpoint: s.remote, What: ErrHistory.Error() + ": signed times went backwards",
				Expected: "a time no earlier than " + h.last.UTC().Format(time.RFC3339), Found: tc.Time.UTC().Format(time.RFC3339)}
		}
		h.last = tc.Time
		h.queue = append(h.queue, tc)
	}
	return nil
}

// same checks that a published history checkpoint of a size the replica
// holds is the replica's own. The log key signs a size more than once
// when the writer refreshes its checkpoint; the batch's is the first,
// the earliest signed. Another tree at that size is a fork. The same
// tree signed later is a refresh put in the batch checkpoint's place: a
// SourceError. The same tree signed earlier means the replica holds a
// refresh in that place (a source substituted it before): the replica's
// history is corrected with the earlier checkpoint and the sync refused
// with ErrHistoryRepaired, so that the next sync replays the log at the
// corrected times.
func (h *historyQueue) same(tc TimedCheckpoint, path string) error {
	s := h.s
	var mine []byte
	err := s.l.db.View(func(txn Txn) error {
		var err error
		mine, err = txn.Get(historyKey(tc.Size))
		return err
	})
	if err == nil && string(mine) == string(tc.Signed) {
		return nil
	}
	var held TimedCheckpoint
	if err == nil {
		held, err = s.cv.Open(mine)
	}
	switch {
	case err != nil || held.Hash != tc.Hash:
		return s.inconsistent(nil, fmt.Sprintf("the published log's history checkpoint of size %d (root %s, time %s) is not the replica's: another history",
			tc.Size, hex.EncodeToString(tc.Hash[:]), tc.Time.UTC().Format(time.RFC3339)))
	case !tc.Time.Before(held.Time):
		return &SourceError{Path: path, Index: tc.Size - 1, Checkpoint: s.remote,
			What:     fmt.Sprintf("%v: the checkpoint of size %d is signed later than the batch's (a refresh in its place)", ErrHistory, tc.Size),
			Expected: held.Time.UTC().Format(time.RFC3339), Found: tc.Time.UTC().Format(time.RFC3339)}
	}
	if err := s.l.db.Update(func(txn Txn) error { return txn.Set(historyKey(tc.Size), tc.Signed) }); err != nil {
		return err
	}
	return fmt.Errorf("%w: the replica's history checkpoint of size %d was signed at %s, later than the batch's own (%s, now stored): a source had put a refresh in its place; sync again to replay the log at the corrected times",
		ErrHistoryRepaired, tc.Size, held.Time.UTC().Format(time.RFC3339), tc.Time.UTC().Format(time.RFC3339))
}

// ErrHistoryRepaired: a sync corrected the replica's checkpoint history
// (an earlier-signed checkpoint of a size it holds, for the same tree)
// and stored nothing else; the next sync replays the log from entry 0.
var ErrHistoryRepaired = errors.New("the replica's checkpoint history was corrected; sync again")

// canonicalHistory refuses a history checkpoint in any form but the one
// the writer signs: the log key's note signature and its cosignature/v1,
// and no other line, so that equal checkpoints are equal bytes.
func canonicalHistory(signed []byte, vkey string) error {
	v, err := NewVerifier(vkey)
	if err != nil {
		return err
	}
	n, err := note.Open(signed, note.VerifierList(v))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpointSignature, err)
	}
	if len(n.Sigs) != 1 || len(n.UnverifiedSigs) != 1 {
		return fmt.Errorf("%w: %d signature lines; a history checkpoint carries exactly the log key's signature and its timestamped cosignature", ErrMalformedCheckpoint, len(n.Sigs)+len(n.UnverifiedSigs))
	}
	return nil
}
