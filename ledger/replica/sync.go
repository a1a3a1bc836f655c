package replica

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/progress"
	"github.com/writ-ledger/writ/ledger/tiles"
	"golang.org/x/mod/sumdb/tlog"
)

// ErrSourceLog is wrapped by every *SourceError: a file the source
// published is malformed or does not chain to its signed checkpoint.
var ErrSourceLog = errors.New("the published log does not verify")

// SourceError is the evidence against one published file: its path, the
// entry it concerns (-1 if none), the signed checkpoint it had to chain
// to, and what was expected and found.
type SourceError struct {
	Path       string
	Index      int64
	Checkpoint formats.Checkpoint
	What       string
	Expected   string
	Found      string
}

func (e *SourceError) Error() string {
	s := fmt.Sprintf("%s: %s", e.Path, e.What)
	if e.Index >= 0 {
		s = fmt.Sprintf("%s: entry %d: %s", e.Path, e.Index, e.What)
	}
	if e.Expected != "" || e.Found != "" {
		s += fmt.Sprintf(": expected %s, found %s", e.Expected, e.Found)
	}
	return s + fmt.Sprintf(" (against the signed checkpoint of size %d, root %s)", e.Checkpoint.Size, hexHash(e.Checkpoint.Hash))
}

// Unwrap returns ErrSourceLog.
func (e *SourceError) Unwrap() error { return ErrSourceLog }

// SyncOptions says whom a replica trusts and how its entries are checked.
type SyncOptions struct {
	// VKey is the verifier key of the log's checkpoints, parsed where
	// the caller took it in. A new replica requires it; an existing one
	// must hold this key (the same text, LogKey.String). Nil: the key the
	// replica holds.
	VKey *formats.LogKey
	// History: a new replica keeps a checkpoint history (an authority
	// log), so the source must publish history bundles.
	History bool
	// Check gives the checks every entry passes, in log order, with the
	// time the log accepted it (as for Import). fresh says the callback
	// sees the log from entry 0; otherwise the caller's state already
	// covers the replica's entries up to Verified, and only new entries
	// are passed. Nil: no checks beyond the tree and its signatures.
	Check func(fresh bool) (ledger.EntryFunc, func() error)
	// Resume, when set, is called with the replica (open for writing),
	// when it holds a signed checkpoint and the published log adds
	// entries, before Check; covered says the caller's check state covers
	// the replica (Verified is its checkpoint). The caller binds that
	// state to l, or builds it from the replica's persisted state
	// (verify.LoadAuthority); Check(false) then sees only the new
	// entries, instead of Check(true) seeing every entry from 0. An error
	// refuses the sync as a replica that does not verify does.
	Resume func(l *ledger.Log, covered bool) error
	// Index, when set, is called for a new replica (its entries
	// bulk-loaded) once every entry passed Check and the entries hash to
	// the signed root, before the load is flushed: the caller may put its
	// state index's content keys into the load (ReplicaWriter.BulkSeen)
	// and bind them in Stored. An error refuses the sync, and the new
	// replica is removed.
	Index func(w *ledger.ReplicaWriter) error
	// Stored, when set, is called with the replica once the new entries
	// and their checkpoint are stored: the caller extends the replica's
	// persisted state by what its Check saw (stateview.Index.Write). An
	// error is Sync's, the entries staying stored: the next reader
	// extends the state itself.
	Stored func(l *ledger.Log) error
	// Verified is the signed checkpoint the caller's check state covers
	// (Synced.Signed of the previous sync), or nil.
	Verified []byte
	// Now is the clock for the reported time and the policy's check of
	// cosignature times (nil: time.Now).
	Now func() time.Time
	// Policy, when set, is the witness policy (c2sp.org/tlog-policy) the
	// published checkpoint must meet before anything is stored: a
	// checkpoint its quorum did not cosign is a *formats.QuorumError
	// (wrapping ErrQuorum), and the replica is left as it was.
	Policy *formats.Policy
	// Seen, when set, is called with the published checkpoint (with its
	// cosignatures) and the key it verified under (never nil), once it
	// verified and met Policy, and returns checkpoints of the log shown to
	// others (the witnesses' latest): each is proven consistent with the
	// published one (see SeenCheckpoint), before the sync commits
	// anything. A split view refuses the sync (*SplitViewError); the rest
	// is in Synced.Seen.
	Seen func(published []byte, k *formats.LogKey) []SeenCheckpoint
	// Progress, when set, is told the new entries fetched and checked, of
	// those the published checkpoint adds to the replica.
	Progress progress.Func
	// Anchor, when set, is the caller's trust assertion on what the
	// replica already holds: it is called with the replica's entry 0,
	// proven against the replica's signed checkpoint (Log.ProvenEntry),
	// before anything is fetched past the published checkpoint or stored,
	// on every path (growing, up to date, a refreshed checkpoint, a
	// refusal of an older or forked one). An error refuses the sync as is.
	// It is not called for a replica that holds no entry yet (Check sees
	// every entry then), nor when Verified names the published checkpoint
	// (the caller's state covering it was anchored when it was built).
	Anchor func(first []byte) error
}

// Synced reports what Sync did.
type Synced struct {
	Before, After int64               // entries the replica held before and after
	Checkpoint    formats.Checkpoint  // the signed checkpoint the replica holds now
	Signed        []byte              // its bytes as published, with witness cosignatures (SyncOptions.Verified for the next sync)
	Witnessing    *formats.Witnessing // what SyncOptions.Policy found on it (nil without a policy)
	Seen          []SeenResult        // what SyncOptions.Seen's checkpoints proved
	VKey          *formats.LogKey     // the replica's verifier key (nil when Sync failed before it was known)
	Requests      int                 // files fetched, the checkpoint included
	Bytes         int64               // bytes fetched
	Refreshed     bool                // same tree, newer checkpoint stored
}

// Sync grows the replica log in directory dir from the published log at
// src (c2sp.org/tlog-tiles, as Publish writes it), and creates it when
// dir does not exist yet: a new replica is written beside dir, under a
// lock of its own (createBeside: ledger.ErrLocked while another process
// creates it), its entries bulk-loaded (ledger.Log.NewBulkReplicaWriter),
// and renamed to dir once all of it is durable, so a kill leaves no
// replica or the whole of it; the next first sync removes what a killed
// one left. It fetches the checkpoint, which must verify
// under the replica's key (a *TrustError, rules.VKeyMismatch, when no
// signature is by that key, or when opts.VKey is not the key the replica
// stores; ErrCheckpointSignature for a forged one); when it is the one
// opts.Verified names, that is all. opts.Anchor judges the replica's
// first entry before anything else. A smaller checkpoint, or one that
// forks from the replica, is an *InconsistencyError with both signed
// checkpoints and the failing consistency proof (built from the source's
// hash tiles, which are read only to give this evidence). Otherwise it
// fetches only the entry bundles (and history bundles) from the tile
// holding the replica's size, recomputes the tree from the replica's
// verified compact range and the new entries (no hash tile is trusted),
// checks every history checkpoint's signature, time and root, runs
// opts.Check on every new entry, and stores all of it with the signed
// checkpoint, or nothing: a refusal or failure removes what was copied,
// so the replica is left as it was. A file that does not chain to the
// signed checkpoint is a *SourceError; a source that cannot be read
// wraps tiles.ErrFetch.
func Sync(ctx context.Context, dir string, src tiles.Source, opts SyncOptions) (Synced, error) {
	var res Synced
	signed, err := src.Get(ctx, "checkpoint", formats.MaxCheckpointSize)
	res.Requests, res.Bytes = 1, int64(len(signed))
	if err != nil {
		return res, err
	}
	if opts.Verified != nil && bytes.Equal(signed, opts.Verified) && opts.VKey != nil {
		key := opts.VKey
		res.Signed, res.VKey = signed, key
		res.Checkpoint, err = ledger.OpenTrusted(signed, key, "")
		res.Before, res.After = res.Checkpoint.Size, res.Checkpoint.Size
		if err == nil {
			err = checkPolicy(&res, opts, signed, key)
		}
		if err == nil && opts.Seen != nil {
			// Nothing new: each view is compared with the replica's tree,
			// which is the published one.
			local, lerr := ledgerdir.OpenWaiting(dir, nil, ledgerdir.WriterLockWait)
			if lerr != nil {
				return res, lerr
			}
			defer local.Close()
			s := &syncer{ctx: ctx, src: src, l: local, res: &res, opts: opts, remote: res.Checkpoint, local: res.Checkpoint, remoteFull: signed}
			err = s.checkSeen(opts.Seen(signed, key))
		}
		return res, err
	}
	local, created, err := openReplica(dir, signed, opts)
	if err != nil {
		return res, err
	}
	defer local.Close()
	res.VKey = local.Key()
	s := &syncer{ctx: ctx, src: src, l: local, res: &res, opts: opts, bulk: created != nil}
	err = s.run(signed)
	if created != nil {
		err = created.place(local, err)
	}
	return res, err
}

// SyncLog is Sync into l, a log open for writing in this process (an
// authority log's writer catching up with the entries other writers
// put on a shared engine: engine.Writer), which must exist: the
// published checkpoint is fetched and everything after it is as Sync
// does, l left as it was on any refusal or failure. l's committer must
// not be appending meanwhile.
func SyncLog(ctx context.Context, l *ledger.Log, src tiles.Source, opts SyncOptions) (Synced, error) {
	var res Synced
	signed, err := src.Get(ctx, "checkpoint", formats.MaxCheckpointSize)
	res.Requests, res.Bytes, res.VKey = 1, int64(len(signed)), l.Key()
	if err != nil {
		return res, err
	}
	s := &syncer{ctx: ctx, src: src, l: l, res: &res, opts: opts}
	return res, s.run(signed)
}

// openReplica opens the replica at dir for writing, or creates it with
// the checkpoint's origin and opts.VKey.
func openReplica(dir string, signed []byte, opts SyncOptions) (*ledger.Log, *newLog, error) {
	if _, err := os.Stat(dir); err == nil {
		return openExisting(dir, opts)
	}
	if opts.VKey == nil {
		return nil, nil, fmt.Errorf("%w: no replica at %s yet: give the verifier key of the log to create one", ledger.ErrWrongKey, dir)
	}
	role := "decisions"
	if opts.History {
		role = "authority"
	}
	cp, err := ledger.OpenTrusted(signed, opts.VKey, role)
	if err != nil {
		return nil, nil, fmt.Errorf("the published checkpoint%s: %w", otherLog(signed, opts.VKey.Name()), err)
	}
	l, created, err := createBeside(dir, cp.Origin, opts.VKey.String(), opts.History)
	if errors.Is(err, errAppeared) {
		// Another first sync placed it meanwhile: sync that one.
		return openExisting(dir, opts)
	}
	return l, created, err
}

// openExisting opens the replica at dir for writing, refusing one of
// another key or history setting than opts asks for.
func openExisting(dir string, opts SyncOptions) (*ledger.Log, *newLog, error) {
	l, err := ledgerdir.OpenWaiting(dir, nil, ledgerdir.WriterLockWait)
	if err != nil {
		return nil, nil, err
	}
	if opts.VKey != nil && opts.VKey.String() != l.VerifierKey() {
		l.Close()
		return nil, nil, ledger.KeyMismatch(l.Role(), "the replica at "+dir, opts.VKey.String(), l.VerifierKey())
	}
	if opts.Check != nil && opts.History != l.HasHistory() {
		l.Close()
		return nil, nil, fmt.Errorf("%w: the replica at %s differs from the log it syncs in keeping a checkpoint history", ledger.ErrNotALog, dir)
	}
	return l, nil, nil
}

// checkPolicy judges the published checkpoint signed (with its witness
// cosignatures) by opts.Policy, if any, and records what it found.
func checkPolicy(res *Synced, opts SyncOptions, signed []byte, k *formats.LogKey) error {
	if opts.Policy == nil {
		return nil
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	w, err := opts.Policy.Check(signed, k, now())
	res.Witnessing = &w
	if err != nil {
		return fmt.Errorf("the published checkpoint: %w", err)
	}
	return nil
}

// hexHash gives a tree hash in lower-case hex, for evidence.
func hexHash(h tlog.Hash) string { return hex.EncodeToString(h[:]) }

// emptyRoot is the RFC 6962 hash of the empty tree: SHA-256 of "".
var emptyRoot, _ = tlog.TreeHash(0, nil)
