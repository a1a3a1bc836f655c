package runner

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/ledgerdir"
	"github.com/writ-ledger/writ/ledger/progress"
	"github.com/writ-ledger/writ/ledger/publish"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/stateview"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/ledger/witness"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/internal/replay"
)

// Replica keeps a runner's authority log current from a published log
// (c2sp.org/tlog-tiles, as `writ ledger publish` or `writ ledger serve`
// give it): replica.Sync with the checks writ runs when a log grows. Every
// new entry is replayed, at the time the log accepted it, into the
// authority state of the replica's entries, exactly as the writer's
// append judged it, and the first root must have the digest TrustRoot
// when one is given. Between syncs the Replica keeps that state, so a
// poll with no new entries costs one checkpoint request and no replay; a
// replica changed by anyone else is verified and replayed from entry 0
// again.
type Replica struct {
	Dir       string          // the ledger directory; the log is Dir/authority
	Source    tiles.Source    // where the log is published
	VKey      *formats.LogKey // the trusted checkpoint verifier key (required for a new replica; nil: the key the replica holds)
	TrustRoot string          // sha256:<hex> of the first root record, or empty
	// Policy, when set, is the witness policy (c2sp.org/tlog-policy) the
	// published checkpoint must meet before anything is stored. Then the
	// latest checkpoint each policy witness with a URL cosigned is fetched
	// (its tlog-witness monitoring URL) and proven consistent with the
	// published one (replica.SyncOptions.Seen): a split view refuses the
	// sync (*replica.SplitViewError), and Views says what each showed.
	Policy *formats.Policy
	// Witnesses fetches the witnesses' checkpoints (nil: a zero Client).
	Witnesses *witness.Client
	// Progress, when set, is told each Sync's new entries fetched and
	// checked, of those the published checkpoint adds.
	Progress progress.Func
	// Views are what the last Sync found of the witnesses' checkpoints.
	Views []replica.SeenResult

	// Note is set by each Sync: the note of a replica whose persisted
	// state could not be used and was replayed whole
	// (verify.Authority.ReplayNote), "" otherwise.
	Note string

	st       *delegation.State
	index    *verify.StateIndexer // what the last check added to st, for the replica's state index
	verified []byte
	anchored anchored // the assertions st and verified were checked under
}

// Sync fetches what the source published since the last sync and stores
// it, or nothing. VKey, TrustRoot and Policy are judged on every path:
// a replica that is up to date, or only takes a refreshed checkpoint, is
// refused under a wrong TrustRoot as one that grows is (its entry 0,
// proven against its signed checkpoint, is the first root). Errors: those
// of replica.Sync, a *delegation.RecordError for an entry the authority
// rules refuse (with its index), and a *ledger.TrustError wrapping
// verify.ErrRootUntrusted (rules.RootUntrusted, with both digests) or
// ledger.ErrVKeyMismatch (rules.VKeyMismatch, with both key names).
func (r *Replica) Sync(ctx context.Context) (replica.Synced, error) {
	res, err := r.sync(ctx)
	if errors.Is(err, replica.ErrHistoryRepaired) {
		// The replica's history was corrected: replay it at the right
		// times, once.
		res, err = r.sync(ctx)
	}
	r.Views = res.Seen
	return res, err
}

// witnessViews fetches, in parallel, each policy witness's latest
// checkpoint of the log (its tlog-witness monitoring URL): the views a
// sync proves consistent with the published checkpoint (replica.Sync,
// SyncOptions.Seen).
func (r *Replica) witnessViews(ctx context.Context, published []byte) []replica.SeenCheckpoint {
	c := r.Witnesses
	if c == nil {
		c = &witness.Client{}
	}
	origin, _, _ := strings.Cut(string(published), "\n")
	ws := r.Policy.SubmissionWitnesses()
	out := make([]replica.SeenCheckpoint, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen, err := c.Checkpoint(ctx, w.URL, origin)
			out[i] = replica.SeenCheckpoint{Source: "witness " + w.Name, Signed: seen, Err: err}
		}()
	}
	wg.Wait()
	return out
}

func (r *Replica) sync(ctx context.Context) (replica.Synced, error) {
	r.Note = ""
	if r.anchored != anchoredBy(r) {
		// The state kept from the last sync was built under other
		// assertions: judge the replica again, on every path.
		r.st, r.verified = nil, nil
	}
	var seen func([]byte, *formats.LogKey) []replica.SeenCheckpoint
	if r.Policy != nil {
		seen = func(published []byte, _ *formats.LogKey) []replica.SeenCheckpoint {
			return r.witnessViews(ctx, published)
		}
	}
	res, err := replica.Sync(ctx, filepath.Join(r.Dir, ledgerdir.AuthorityDir), r.Source, replica.SyncOptions{
		VKey: r.VKey, History: true, Verified: r.verified, Policy: r.Policy, Seen: seen, Progress: r.Progress,
		Anchor: verify.Trust{TrustRoot: r.TrustRoot}.CheckFirst,
		Resume: r.resume, Check: r.check, Stored: r.stored,
		Index: func(w *ledger.ReplicaWriter) error { return r.index.Bulk(w) },
	})
	if err != nil {
		r.st, r.verified = nil, nil
		return res, err
	}
	// The state covers the replica only if a check ran on it (a sync
	// that added nothing replays nothing).
	if r.st != nil {
		r.verified = res.Signed
	} else {
		r.verified = nil
	}
	r.VKey = res.VKey
	r.anchored = anchoredBy(r)
	return res, nil
}

// resume binds the state kept from the last sync to the replica's
// authority log l when it covers the replica, else builds it from what l
// persisted (verify.LoadAuthority: extended by what is new, or replayed
// whole when it cannot be used).
func (r *Replica) resume(l *ledger.Log, covered bool) error {
	if covered && r.st != nil && indexCovers(l, r.st.Size()) && r.st.Rebind(stateview.NewIndex(l)) == nil {
		return nil
	}
	a, err := verify.LoadAuthority(l, r.VKey)
	if err != nil {
		return err
	}
	if err := (verify.Trust{TrustRoot: r.TrustRoot}).CheckRoot(a.State); err != nil {
		return err
	}
	r.st, r.Note = a.State, a.ReplayNote()
	return nil
}

// indexCovers reports whether l's state index is bound to its signed
// checkpoint of size n: what a state kept from the last sync may be
// rebound to (another process may have dropped or be rewriting the index
// since: then the state is built again from what l persisted).
func indexCovers(l *ledger.Log, n int64) bool {
	cp, err := l.SignedHead()
	if err != nil || cp.Size != n {
		return false
	}
	b, ok, err := stateview.NewIndex(l).Binding()
	return err == nil && ok && b.Size == cp.Size && b.Root == cp.Hash
}

// check replays the new entries into the replica's state (a new one
// when fresh: every entry from 0), recording what they add to the
// replica's state index, and then judges its first root.
func (r *Replica) check(fresh bool) (ledger.EntryFunc, func() error) {
	if fresh || r.st == nil {
		r.st = delegation.NewState()
	}
	r.index = verify.NewStateIndexer(r.st, r.st.Size())
	fn, wait := replay.Apply(r.st, r.index.Applied)
	return fn, func() error {
		if err := wait(); err != nil {
			return err
		}
		return verify.Trust{TrustRoot: r.TrustRoot}.CheckRoot(r.st)
	}
}

// stored writes what check recorded to the replica's state index, once
// the new entries are stored.
func (r *Replica) stored(l *ledger.Log) error {
	cp, err := l.SignedHead()
	if err != nil {
		return err
	}
	return r.index.Write(l, ledger.StateBinding{Size: cp.Size, Root: cp.Hash})
}

// anchored is what a Replica's kept state was verified under: the
// verifier key (its text, "" for none), the first root's digest and the
// witness policy.
type anchored struct {
	vkey, trustRoot string
	policy          *formats.Policy
}

// anchoredBy returns the assertions r syncs under now.
func anchoredBy(r *Replica) anchored {
	a := anchored{trustRoot: r.TrustRoot, policy: r.Policy}
	if r.VKey != nil {
		a.vkey = r.VKey.String()
	}
	return a
}

// SyncDecisions grows the decision-log replica at dir from src: the log's
// checkpoints verify under vkey (nil: the key the replica holds; a new
// replica requires it) and every decision decodes strictly (as
// ImportLedger checks a decisions section). Errors: those of replica.Sync,
// and a *delegation.RecordError for a malformed decision.
func SyncDecisions(ctx context.Context, dir string, src tiles.Source, vkey *formats.LogKey) (replica.Synced, error) {
	return replica.Sync(ctx, dir, src, replica.SyncOptions{VKey: vkey, Check: func(bool) (ledger.EntryFunc, func() error) {
		return replay.Decisions()
	}})
}

// PublishDecisions publishes the runner's decision log into the
// directory to, as `writ ledger publish --decisions` does
// (publish.Publish): a runner whose admission server holds the log
// publishes it this way, while it serves. The log is this runner's own,
// whose head it checks before every append; Publish checks the signed
// root and every published entry's leaf hash. Errors: those of Publish.
func (r *Runner) PublishDecisions(to string) (publish.Published, error) {
	return publish.Publish(r.dec, to)
}
