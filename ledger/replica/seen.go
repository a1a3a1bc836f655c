package replica

import (
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/witness"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// ErrUndecided: a checkpoint seen elsewhere is larger than the published
// one, and the source's hash tiles cannot prove the two consistent or not
// (the publication has not reached what a witness cosigned).
var ErrUndecided = errors.New("consistency with the published checkpoint cannot be decided yet")

// SeenCheckpoint is a checkpoint of the log that someone else was shown
// (a witness's latest, from its c2sp.org/tlog-witness monitoring URL),
// which a sync proves consistent with the published one (SyncOptions.Seen).
type SeenCheckpoint struct {
	Source string // who showed it, for the evidence: "witness w3"
	Signed []byte // the signed checkpoint as fetched (nil when Err is set)
	Err    error  // why it could not be fetched: reported, not a refusal
}

// SeenResult is what a sync found of one SeenCheckpoint.
type SeenResult struct {
	Source string `json:"source"`
	Size   int64  `json:"size"` // its tree size; -1 when it was not read
	// Err is nil for a view proven consistent, wraps ErrUndecided for a
	// larger tree the source's tiles cannot prove yet, or says why the
	// view was not read (a fetch that failed, a checkpoint that is not
	// signed by the log's key).
	Err   error  `json:"-"`
	Error string `json:"error,omitempty"`
}

// SplitViewError: a checkpoint of the log seen elsewhere (Source) is not
// consistent with the published one: the log's key signed two histories.
// The embedded *InconsistencyError carries both signed checkpoints
// (Trusted is the published one, Found the seen one) and, where there is
// one, the consistency proof that fails.
type SplitViewError struct {
	Source string
	*ledger.InconsistencyError
}

func (e *SplitViewError) Error() string {
	return fmt.Sprintf("%s holds another view of the log: %v", e.Source, e.InconsistencyError)
}

// Unwrap returns the *InconsistencyError.
func (e *SplitViewError) Unwrap() error { return e.InconsistencyError }

// seenView is a seen checkpoint whose consistency is proven once the new
// entries are in the replica (its tree is between the replica's and the
// published one).
type seenView struct {
	v  SeenCheckpoint
	cp formats.Checkpoint
}

// openSeen verifies a seen checkpoint's signature by the log's key
// (c2sp.org/signed-note) and reads its tree size and root. Unlike
// OpenCheckpoint, it accepts extension lines: a witness cosigns and
// serves whatever checkpoint the log's key signed, and a fork dressed
// with an extension line is a fork all the same.
func openSeen(signed []byte, vkey string) (formats.Checkpoint, error) {
	v, err := formats.NewVerifier(vkey)
	if err != nil {
		return formats.Checkpoint{}, err
	}
	if _, err := note.Open(signed, note.VerifierList(v)); err != nil {
		return formats.Checkpoint{}, fmt.Errorf("%w: %w", formats.ErrCheckpointSignature, err)
	}
	c, err := witness.ParseCheckpoint(signed)
	if err != nil {
		return formats.Checkpoint{}, fmt.Errorf("%w: %w", formats.ErrMalformedCheckpoint, err)
	}
	if c.Origin != v.Name() {
		return formats.Checkpoint{}, fmt.Errorf("%w: a checkpoint of %q", formats.ErrMalformedCheckpoint, c.Origin)
	}
	return formats.Checkpoint{Origin: c.Origin, Size: c.Size, Hash: c.Hash}, nil
}

// checkSeen proves each seen checkpoint consistent with the published one
// where it can before anything is fetched: the same size must have the
// same root; a smaller tree that the replica holds must have the root the
// replica's stored tree has at its size; a larger tree is proven from the
// source's hash tiles, or left undecided. Trees between the replica's and
// the published size are kept for checkDeferred. A split view is a
// *SplitViewError, a replica whose stored tree does not lead to its
// signed root an *IntegrityError; everything else is reported in
// Synced.Seen.
func (s *syncer) checkSeen(views []SeenCheckpoint) error {
	for _, v := range views {
		res := SeenResult{Source: v.Source, Size: -1, Err: v.Err}
		if v.Err == nil {
			var cp formats.Checkpoint
			cp, res.Err = openSeen(v.Signed, s.l.VerifierKey())
			if res.Err == nil {
				res.Size = cp.Size
				res.Err = s.decide(v, cp)
			}
		}
		var sv *SplitViewError
		var ie *ledger.IntegrityError
		if errors.As(res.Err, &sv) {
			return sv
		}
		if errors.As(res.Err, &ie) {
			return fmt.Errorf("the replica: %w", ie)
		}
		if res.Err != nil {
			res.Error = res.Err.Error()
		}
		s.res.Seen = append(s.res.Seen, res)
	}
	return nil
}

func (s *syncer) decide(v SeenCheckpoint, cp formats.Checkpoint) error {
	switch {
	case cp.Size == s.remote.Size:
		if cp.Hash != s.remote.Hash {
			return s.split(v, cp, nil, "the same size with another root")
		}
		return nil
	case cp.Size > s.remote.Size:
		return s.provenFromTiles(v, cp)
	case cp.Size == 0:
		if cp.Hash != emptyRoot {
			return s.split(v, cp, nil, "an empty tree with a root that is not the empty tree's")
		}
		return nil
	case cp.Size <= s.local.Size:
		p, err := s.l.ProveConsistency(cp.Size, s.local.Size)
		if err != nil {
			return err
		}
		// The proof is built from stored hashes: it counts only if it
		// leads to the replica's signed root.
		if p.NewRoot != s.local.Hash || p.Verify() != nil {
			return &ledger.IntegrityError{Index: -1, What: "stored tree hashes",
				Detail: fmt.Sprintf("the replica's stored tree does not prove its size %d into its signed root; run `writ ledger verify`", cp.Size)}
		}
		if p.OldRoot != cp.Hash {
			q := *p
			q.OldRoot = cp.Hash
			return s.split(v, cp, &q, fmt.Sprintf("the tree of size %d is not a prefix of the replica's (of size %d), which the published one extends", cp.Size, s.local.Size))
		}
		return nil
	}
	s.deferred = append(s.deferred, seenView{v: v, cp: cp})
	return nil
}

// checkDeferred proves the seen trees between the replica's old size and
// the published one against the new tree, read through r (the copy not
// yet committed), before the sync commits it.
func (s *syncer) checkDeferred(r tlog.HashReader) error {
	for _, d := range s.deferred {
		path, err := tlog.ProveTree(s.remote.Size, d.cp.Size, r)
		if err != nil {
			return err
		}
		p := &formats.ConsistencyProof{OldSize: d.cp.Size, NewSize: s.remote.Size, OldRoot: d.cp.Hash, NewRoot: s.remote.Hash, Path: path}
		if p.Verify() != nil {
			return s.split(d.v, d.cp, p, fmt.Sprintf("the tree of size %d is not a prefix of the published one (of size %d)", d.cp.Size, s.remote.Size))
		}
	}
	return nil
}

// provenFromTiles proves the published tree a prefix of a larger seen
// one from the source's hash tiles, which tlog checks against the seen
// root as it reads them.
func (s *syncer) provenFromTiles(v SeenCheckpoint, cp formats.Checkpoint) error {
	if s.remote.Size == 0 {
		return nil
	}
	path, err := tlog.ProveTree(cp.Size, s.remote.Size, tlog.TileHashReader(tlog.Tree{N: cp.Size, Hash: cp.Hash}, &tileReader{s: s}))
	if err != nil {
		// Not wrapped: a tile the proof could not fetch leaves the view
		// undecided; it must not read as the source's fault (tiles.ErrFetch)
		// where the sync tells a source's fault from the checks' refusal.
		return fmt.Errorf("%w: %s holds size %d, the source publishes %d: %v", ErrUndecided, v.Source, cp.Size, s.remote.Size, err)
	}
	p := &formats.ConsistencyProof{OldSize: s.remote.Size, NewSize: cp.Size, OldRoot: s.remote.Hash, NewRoot: cp.Hash, Path: path}
	if p.Verify() != nil {
		return s.split(v, cp, p, fmt.Sprintf("the published tree (of size %d) is not a prefix of the tree of size %d", s.remote.Size, cp.Size))
	}
	return nil
}

func (s *syncer) split(v SeenCheckpoint, cp formats.Checkpoint, p *formats.ConsistencyProof, why string) error {
	return &SplitViewError{Source: v.Source, InconsistencyError: &ledger.InconsistencyError{Trusted: s.remote, Found: cp,
		TrustedSigned: s.remoteFull, FoundSigned: v.Signed, Proof: p, Why: "split view: " + why}}
}
