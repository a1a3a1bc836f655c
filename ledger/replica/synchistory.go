package replica

import (
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/note"
)

// historyQueue reads history bundles ahead of the entries, in tile
// order, and hands out the checkpoint covering each new entry.
type historyQueue struct {
	s        *syncer
	next     int64 // the next history bundle to fetch
	queue    []formats.TimedCheckpoint
	cur      formats.TimedCheckpoint
	have     bool
	last     time.Time
	lastPath string
}

// covering returns the first history checkpoint whose size exceeds i,
// fetching history bundles as needed.
func (h *historyQueue) covering(i int64) (formats.TimedCheckpoint, error) {
	for !h.have || h.cur.Size <= i {
		for len(h.queue) == 0 {
			if err := h.fetch(i); err != nil {
				return formats.TimedCheckpoint{}, err
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
		return &SourceError{Path: h.lastPath, Index: i, Checkpoint: s.remote, What: ledger.ErrHistory.Error() + ": no history checkpoint covers the entry"}
	}
	w := int(min(tiles.Width, s.remote.Size-h.next*tiles.Width))
	t := tiles.Tile{Kind: tiles.KindHistory, Level: -1, N: h.next, W: w}
	h.next++
	h.lastPath = t.Path()
	data, err := s.get(t, tiles.Width*(2+formats.MaxCheckpointSize))
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
			err = canonicalHistory(b, s.l.VerifierKey())
		}
		if err != nil {
			return &SourceError{Path: t.Path(), Index: -1, Checkpoint: s.remote, What: fmt.Sprintf("%v: %v", ledger.ErrHistory, err)}
		}
		if tc.Size <= prev || tc.Size > hi {
			return &SourceError{Path: t.Path(), Index: -1, Checkpoint: s.remote, What: ledger.ErrHistory.Error() + ": a checkpoint outside the tile, or out of order",
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
			return &SourceError{Path: t.Path(), Index: tc.Size - 1, Checkpoint: s.remote, What: ledger.ErrHistory.Error() + ": signed times went backwards",
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
func (h *historyQueue) same(tc formats.TimedCheckpoint, path string) error {
	s := h.s
	mine, err := s.l.HistoryCheckpoint(tc.Size)
	if err == nil && string(mine) == string(tc.Signed) {
		return nil
	}
	var held formats.TimedCheckpoint
	if err == nil {
		held, err = s.cv.Open(mine)
	}
	switch {
	case err != nil || held.Hash != tc.Hash:
		return s.inconsistent(nil, fmt.Sprintf("the published log's history checkpoint of size %d (root %s, time %s) is not the replica's: another history",
			tc.Size, hex.EncodeToString(tc.Hash[:]), tc.Time.UTC().Format(time.RFC3339)))
	case !tc.Time.Before(held.Time):
		return &SourceError{Path: path, Index: tc.Size - 1, Checkpoint: s.remote,
			What:     fmt.Sprintf("%v: the checkpoint of size %d is signed later than the batch's (a refresh in its place)", ledger.ErrHistory, tc.Size),
			Expected: held.Time.UTC().Format(time.RFC3339), Found: tc.Time.UTC().Format(time.RFC3339)}
	}
	if err := s.l.ReplaceHistoryCheckpoint(tc.Signed); err != nil {
		return err
	}
	return fmt.Errorf("%w: the replica's history checkpoint of size %d was signed at %s, later than the batch's own (%s, now stored): a source had put a refresh in its place; sync again to replay the log at the corrected times",
		ErrHistoryRepaired, tc.Size, held.Time.UTC().Format(time.RFC3339), tc.Time.UTC().Format(time.RFC3339))
}

// ErrHistoryRepaired: a sync corrected the replica's checkpoint history
// (an earlier-signed checkpoint of a size it holds, for the same tree)
// and stored nothing else, and dropped the state index's binding: the next sync replays the log from entry 0.
var ErrHistoryRepaired = errors.New("the replica's checkpoint history was corrected; sync again")

// canonicalHistory refuses a history checkpoint in any form but the one
// the writer signs: the log key's note signature and its cosignature/v1,
// and no other line, so that equal checkpoints are equal bytes.
func canonicalHistory(signed []byte, vkey string) error {
	v, err := formats.NewVerifier(vkey)
	if err != nil {
		return err
	}
	n, err := note.Open(signed, note.VerifierList(v))
	if err != nil {
		return fmt.Errorf("%w: %w", formats.ErrCheckpointSignature, err)
	}
	if len(n.Sigs) != 1 || len(n.UnverifiedSigs) != 1 {
		return fmt.Errorf("%w: %d signature lines; a history checkpoint carries exactly the log key's signature and its timestamped cosignature", formats.ErrMalformedCheckpoint, len(n.Sigs)+len(n.UnverifiedSigs))
	}
	return nil
}
