package replica

import (
	"context"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/tlog"
)

// extension is one extend: the entries past the replica's size, fetched
// (fetchBundle), verified against the replica's tree and the history
// (verifyEntry), written (the shared ledger.ReplicaWriter) and, once
// the tree is the signed one, committed with its checkpoint (finish).
type extension struct {
	s      *syncer
	w      *ledger.ReplicaWriter
	h      *historyQueue
	before int64 // the replica's size
	// checkErr is a refusal by the entry checks, held until the batch
	// that holds its entry is proven (checkEnd, the size that proves it).
	checkErr error
	checkEnd int64
}

// extend fetches, proves, checks and stores the entries past the
// replica's size; on any failure it removes what it stored.
func (s *syncer) extend() (err error) {
	newWriter := s.l.NewReplicaWriter
	if s.bulk {
		newWriter = s.l.NewBulkReplicaWriter
	}
	w, err := newWriter()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			if rerr := w.Abort(); rerr != nil {
				err = fmt.Errorf("%w; removing the partial copy also failed: %w", err, rerr)
			}
		}
	}()
	x := &extension{s: s, w: w, before: w.Size()}
	if x.h, err = s.newHistoryQueue(x.before); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	bundles := s.prefetch(ctx, x.before/tiles.Width)
	for n := x.before / tiles.Width; n*tiles.Width < s.remote.Size; n++ {
		entries, path, err := x.fetchBundle(ctx, bundles, n)
		if err != nil {
			return s.finishChecks(err)
		}
		for j, e := range entries {
			if err := x.verifyEntry(n*tiles.Width+int64(j), e, path); err != nil {
				return err
			}
		}
	}
	return x.finish()
}

// fetchBundle takes entry bundle n from the prefetch and parses it.
func (x *extension) fetchBundle(ctx context.Context, bundles <-chan fetched, n int64) ([][]byte, string, error) {
	s := x.s
	w := int(min(tiles.Width, s.remote.Size-n*tiles.Width))
	f, ok := <-bundles
	if !ok {
		return nil, "", fmt.Errorf("%w: %v", tiles.ErrFetch, ctx.Err())
	}
	s.res.Requests++
	s.res.Bytes += int64(len(f.data))
	if f.err != nil {
		return nil, "", f.err
	}
	entries, err := tiles.ParseBundle(f.data, w)
	if err != nil {
		return nil, "", &SourceError{Path: f.t.Path(), Index: -1, Checkpoint: s.remote, What: err.Error()}
	}
	return entries, f.t.Path(), nil
}

// verifyEntry checks published entry i (e, from the bundle at path): one
// the replica holds must be the replica's; a new one is written, proven
// against its batch's history checkpoint, and passed to the checks.
func (x *extension) verifyEntry(i int64, e []byte, path string) error {
	s := x.s
	leaf := tlog.RecordHash(e)
	if i < x.before {
		stored, err := x.w.HashReader().ReadHashes([]int64{tlog.StoredHashIndex(0, i)})
		if err != nil {
			return err
		}
		if stored[0] != leaf {
			return s.finishChecks(s.mismatch(&SourceError{Path: path, Index: i, What: "an entry the replica holds differs",
				Expected: "leaf hash " + hexHash(stored[0]), Found: "leaf hash " + hexHash(leaf)}))
		}
		return nil
	}
	history := s.l.HasHistory()
	var accepted time.Time
	var cover formats.TimedCheckpoint
	if history {
		var err error
		if cover, err = x.h.covering(i); err != nil {
			return s.finishChecks(err)
		}
		accepted = cover.Time
	}
	if err := x.w.Append(e); err != nil {
		return err
	}
	s.opts.Progress.Tick(i+1-x.before, s.remote.Size-x.before)
	if history && cover.Size == i+1 {
		if root := x.w.Root(); root != cover.Hash {
			return s.finishChecks(s.mismatch(&SourceError{Path: path, Index: i,
				What:     fmt.Sprintf("the entries up to this one do not hash to the signed history checkpoint of size %d", cover.Size),
				Expected: "root " + hexHash(cover.Hash), Found: "root " + hexHash(root)}))
		}
		if err := x.w.SetHistory(cover.Size, cover.Signed); err != nil {
			return err
		}
	}
	// A record the checks refuse is reported once the batch that holds
	// it is proven to be the signed one: until then a forged entry is
	// the source's fault, not the writer's.
	if s.fn != nil && x.checkErr == nil {
		if err := s.fn(i, e, accepted); err != nil {
			x.checkErr, x.checkEnd = err, s.remote.Size
			if history {
				x.checkEnd = cover.Size
			}
		}
	}
	if x.checkErr != nil && i+1 >= x.checkEnd {
		return s.finishChecks(x.checkErr)
	}
	return nil
}

// finish checks the new tree against the signed checkpoint, the history
// against its end, the checks' verdict and the deferred views, and stores
// the checkpoint with the last batch.
func (x *extension) finish() error {
	s, l, h := x.s, x.s.l, x.h
	if root := x.w.Root(); root != s.remote.Hash {
		return s.finishChecks(s.mismatch(&SourceError{Path: "checkpoint", Index: -1, What: "the published entries do not hash to the signed root",
			Expected: "root " + hexHash(s.remote.Hash), Found: "root " + hexHash(root)}))
	}
	if l.HasHistory() && (!h.have || h.cur.Size != s.remote.Size) {
		return s.finishChecks(&SourceError{Path: h.lastPath, Index: -1, Checkpoint: s.remote, What: ledger.ErrHistory.Error() + ": the history does not end at the checkpoint's size"})
	}
	if err := s.finishChecks(nil); err != nil {
		return err
	}
	if s.bulk && s.opts.Index != nil {
		if err := s.opts.Index(x.w); err != nil {
			return err
		}
	}
	if err := s.checkDeferred(x.w.HashReader()); err != nil {
		return err
	}
	// What Verify requires of the latest checkpoint, so that the replica
	// never stores what it would then refuse to read.
	if t, err := formats.CheckpointTime(s.remoteSigned, l.Key()); err != nil || (l.HasHistory() && t.Before(h.last)) {
		return &SourceError{Path: "checkpoint", Index: -1, Checkpoint: s.remote,
			What: ledger.ErrHistory.Error() + ": the checkpoint carries no signed time, or one before the last batch's"}
	}
	if err := x.w.Finish(s.remote, s.remoteSigned, s.remoteFull); err != nil {
		return err
	}
	s.res.After, s.res.Checkpoint, s.res.Signed = s.remote.Size, s.remote, s.remoteFull
	return nil
}

// newHistoryQueue starts the history of a replica that keeps one at the
// tile holding entry before, with the time of the replica's last batch.
func (s *syncer) newHistoryQueue(before int64) (*historyQueue, error) {
	h := &historyQueue{s: s, next: before / tiles.Width}
	if !s.l.HasHistory() || before == 0 {
		return h, nil
	}
	v, err := s.l.HistoryCheckpoint(before)
	if err != nil {
		return nil, &ledger.IntegrityError{Index: before - 1, What: "checkpoint history", Detail: ledger.ErrHistory.Error() + ": the replica's last batch has no checkpoint"}
	}
	last, err := s.cv.Open(v)
	if err != nil {
		return nil, err
	}
	h.last = last.Time
	return h, nil
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
			data, err := s.src.Get(ctx, t.Path(), int64(w)*(2+ledger.MaxEntrySize))
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
