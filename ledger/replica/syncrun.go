package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/tlog"
)

// syncer is one Sync of one replica.
type syncer struct {
	ctx  context.Context
	src  tiles.Source
	l    *ledger.Log
	res  *Synced
	opts SyncOptions
	cv   *formats.CosigVerifier
	fn   ledger.EntryFunc
	wait func() error
	bulk bool // a new replica: its entries are bulk-loaded (ledger.Log.NewBulkReplicaWriter)

	local, remote             formats.Checkpoint
	localSigned, remoteSigned []byte     // the log's own checkpoints (m/checkpoint)
	localFull, remoteFull     []byte     // the same with their witness cosignatures
	deferred                  []seenView // seen trees proven once the new entries are in
}

func (s *syncer) get(t tiles.Tile, max int64) ([]byte, error) {
	b, err := s.src.Get(s.ctx, t.Path(), max)
	s.res.Requests++
	s.res.Bytes += int64(len(b))
	return b, err
}

func (s *syncer) run(signed []byte) (err error) {
	l := s.l
	if err := s.anchor(); err != nil {
		return err
	}
	if _, err := l.DropUnsigned(); err != nil {
		return fmt.Errorf("the replica: %w", err)
	}
	if s.remote, err = ledger.OpenTrusted(signed, l.Key(), l.Role()); err != nil {
		return fmt.Errorf("the published checkpoint at %s%s: %w", s.src, otherLog(signed, l.Origin()), err)
	}
	if err := checkPolicy(s.res, s.opts, signed, l.Key()); err != nil {
		return err
	}
	s.remoteFull = signed
	if s.remoteSigned, err = formats.LogSigned(signed, l.Key()); err != nil {
		return fmt.Errorf("the published checkpoint at %s: %w", s.src, err)
	}
	s.cv = l.Key().Cosig()
	localSigned, lerr := l.Checkpoint()
	switch {
	case lerr == nil:
		if s.local, err = formats.OpenCheckpoint(localSigned, l.Key()); err != nil {
			return fmt.Errorf("the replica: %w", err)
		}
	case l.Size() == 0:
		s.local = formats.Checkpoint{Origin: l.Origin(), Hash: emptyRoot}
	default:
		return lerr
	}
	s.localSigned, s.localFull = localSigned, localSigned
	if lerr == nil {
		if s.localFull, err = l.CosignedCheckpoint(); err != nil {
			return err
		}
	}
	s.res.Before, s.res.After, s.res.Checkpoint, s.res.Signed = s.local.Size, s.local.Size, s.local, s.localFull
	if s.opts.Seen != nil && s.remote.Origin == s.local.Origin {
		if err := s.checkSeen(s.opts.Seen(signed, l.Key())); err != nil {
			return err
		}
	}
	// Nothing is added unless the published log is larger: those cases
	// need no replay of the replica (what they store, if anything, is a
	// newer checkpoint of the same tree).
	switch {
	case s.remote.Origin != s.local.Origin:
		return s.inconsistent(nil, fmt.Sprintf("the published log's origin is %q, the replica's %q", s.remote.Origin, s.local.Origin))
	case s.remote.Size < s.local.Size:
		return s.older()
	case s.remote.Size == s.local.Size && s.remote.Hash != s.local.Hash:
		return s.inconsistent(nil, "the published log forked from the replica: the same size with another root")
	case s.remote.Size == s.local.Size:
		return s.refresh()
	}
	return s.grow(lerr == nil)
}

// grow checks and stores the entries the published log adds, against
// the state of the replica's (signed says the replica holds a signed
// checkpoint): the caller's, when it covers exactly the replica's
// checkpoint or is resumed from the replica's persisted state
// (SyncOptions.Resume), else a replay of the whole replica, verified.
func (s *syncer) grow(signed bool) error {
	l := s.l
	covered := s.opts.Verified != nil && signed && bytes.Equal(s.localFull, s.opts.Verified)
	if signed && s.opts.Resume != nil {
		if err := s.opts.Resume(l, covered); err != nil {
			return fmt.Errorf("the replica: %w", err)
		}
		covered = true
	}
	fresh := !covered
	if s.opts.Check != nil {
		s.fn, s.wait = s.opts.Check(fresh)
	}
	if signed && fresh {
		if _, err := l.Verify(l.Key(), s.fn); err != nil {
			return s.finishChecks(fmt.Errorf("the replica: %w", err))
		}
	}
	if err := s.extend(); err != nil || s.opts.Stored == nil {
		return err
	}
	return s.opts.Stored(l)
}

// anchor runs SyncOptions.Anchor on the replica's entry 0, proven
// against its signed checkpoint, when the replica holds entries: first,
// so that a trust assertion is judged on every path of a sync, whatever
// the source publishes.
func (s *syncer) anchor() error {
	l := s.l
	if s.opts.Anchor == nil {
		return nil
	}
	signed, err := l.Checkpoint()
	if err != nil {
		return nil // nothing signed yet: Check sees every entry
	}
	cp, err := formats.OpenCheckpoint(signed, l.Key())
	if err != nil {
		return fmt.Errorf("the replica: %w", err)
	}
	if cp.Size == 0 {
		return nil
	}
	first, err := l.ProvenEntry(0, cp)
	if err != nil {
		return fmt.Errorf("the replica: %w", err)
	}
	return s.opts.Anchor(first)
}

// finishChecks waits for the entry checks in flight. A source at fault
// (a file that does not chain to the signed checkpoint, a fork, a fetch
// that failed) is reported before a record the checks refused, which may
// be one the source forged; otherwise the checks' refusal, with its
// index, comes before err (a consequence of stopping early).
func (s *syncer) finishChecks(err error) error {
	if s.wait != nil {
		werr := s.wait()
		s.wait = nil
		sourceFault := errors.Is(err, ErrSourceLog) || errors.Is(err, ledger.ErrInconsistent) || errors.Is(err, tiles.ErrFetch)
		if werr != nil && !sourceFault {
			return werr
		}
	}
	return err
}

func (s *syncer) inconsistent(p *formats.ConsistencyProof, why string) error {
	return &ledger.InconsistencyError{Trusted: s.local, Found: s.remote, TrustedSigned: s.localFull, FoundSigned: s.remoteFull, Proof: p, Why: why}
}

// older explains a published checkpoint smaller than the replica's: a
// prefix of it (a rollback, or a stale mirror) or a fork, with the
// consistency proof from the replica's own tree.
func (s *syncer) older() error {
	p, err := s.l.ProveConsistency(s.remote.Size, s.local.Size)
	if err != nil {
		return err
	}
	q := *p
	q.OldRoot = s.remote.Hash
	if q.Verify() == nil && p.OldRoot == s.remote.Hash {
		return s.inconsistent(p, "the published checkpoint is older than the replica's (a rollback, or a stale mirror)")
	}
	return s.inconsistent(p, "the published log forked from the replica: its smaller tree is not a prefix of the replica's")
}

// refresh stores a newer checkpoint of the same tree (a writer's
// `ledger checkpoint --refresh`), so that freshness checks see its time.
func (s *syncer) refresh() error {
	if bytes.Equal(s.remoteSigned, s.localSigned) {
		if bytes.Equal(s.remoteFull, s.localFull) {
			return nil
		}
		// The same checkpoint with other cosignatures: keep the source's,
		// which passed the policy if there is one.
		if err := s.l.StoreCheckpoint(s.remoteSigned, s.remoteFull); err != nil {
			return err
		}
		s.res.Signed = s.remoteFull
		return nil
	}
	newT, err := formats.CheckpointTime(s.remoteSigned, s.l.Key())
	if err != nil {
		return nil // an untimed checkpoint never replaces one
	}
	oldT, err := formats.CheckpointTime(s.localSigned, s.l.Key())
	// Under a policy, a published checkpoint that met it replaces one the
	// replica holds that does not, whatever their times: the replica must
	// hold what its readers' policy accepts (the sync said it met it).
	unwitnessed := s.opts.Policy != nil && !s.policyMet(s.localFull)
	if err == nil && !newT.After(oldT) && !unwitnessed {
		return nil
	}
	if err := s.l.StoreCheckpoint(s.remoteSigned, s.remoteFull); err != nil {
		return err
	}
	s.res.Refreshed, s.res.Checkpoint, s.res.Signed = true, s.remote, s.remoteFull
	return nil
}

// policyMet reports whether signed meets SyncOptions.Policy now.
func (s *syncer) policyMet(signed []byte) bool {
	now := time.Now
	if s.opts.Now != nil {
		now = s.opts.Now
	}
	_, err := s.opts.Policy.Check(signed, s.l.Key(), now())
	return err == nil
}

// remoteProof builds the consistency proof from the replica's tree to the
// published one out of the source's hash tiles, which tlog checks against
// the published root as it reads them.
func (s *syncer) remoteProof() (*formats.ConsistencyProof, error) {
	tree := tlog.Tree{N: s.remote.Size, Hash: s.remote.Hash}
	r := tlog.TileHashReader(tree, &tileReader{s: s})
	path, err := tlog.ProveTree(s.remote.Size, s.local.Size, r)
	if err != nil {
		return nil, err
	}
	return &formats.ConsistencyProof{OldSize: s.local.Size, NewSize: s.remote.Size, OldRoot: s.local.Hash, NewRoot: s.remote.Hash, Path: path}, nil
}

// tileReader reads hash tiles from the source for tlog.TileHashReader.
type tileReader struct{ s *syncer }

func (t *tileReader) Height() int { return tiles.Height }

func (t *tileReader) ReadTiles(ts []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(ts))
	for i, x := range ts {
		tile := tiles.Tile{Kind: tiles.KindHashTile, Level: x.L, N: x.N, W: x.W}
		b, err := t.s.get(tile, 32*tiles.Width)
		if err != nil {
			return nil, err
		}
		if err := tiles.ParseHashTile(b, x.W); err != nil {
			return nil, fmt.Errorf("%s: %w", tile.Path(), err)
		}
		out[i] = b
	}
	return out, nil
}

func (t *tileReader) SaveTiles([]tlog.Tile, [][]byte) {}

// mismatch turns a published file that does not lead to the signed root
// into evidence: when the source's hash tiles prove that the published
// tree extends the replica's, the file is at fault (a *SourceError);
// otherwise the published log forked from the replica.
func (s *syncer) mismatch(se *SourceError) error {
	se.Checkpoint = s.remote
	p, err := s.remoteProof()
	if err == nil {
		if p.Verify() == nil {
			return se
		}
		return s.inconsistent(p, "the published log forked from the replica: the consistency proof from its hash tiles fails")
	}
	if errors.Is(err, tiles.ErrFetch) && s.ctx.Err() != nil {
		return se
	}
	se.What += fmt.Sprintf(" (and its hash tiles give no consistency proof from the replica's tree: %v)", err)
	return se
}

// otherLog says, for a checkpoint that does not verify, when its first
// line names another log than the one expected ("" otherwise): the
// likely reason, a source or key of another log.
func otherLog(signed []byte, origin string) string {
	first, _, _ := strings.Cut(string(signed[:min(len(signed), 256)]), "\n")
	if first == origin {
		return ""
	}
	return fmt.Sprintf(" names the log %q; this replica is of %q (another log's publication, or another log's key)", first, origin)
}
