package verify

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/ledger/witness"
)

// ErrRootUntrusted: a log's first root record is not the one the reader
// was told to trust (--trust-root, RuleRootUntrusted).
var ErrRootUntrusted = errors.New("the ledger's first root is not the trusted one")

// Replica keeps a runner's authority log current from a published log
// (c2sp.org/tlog-tiles, as `writ ledger publish` or `writ ledger serve`
// give it): ledger.Sync with the checks writ runs when a log grows. Every
// new entry is replayed, at the time the log accepted it, into the
// authority state of the replica's entries, exactly as the writer's
// append judged it, and the first root must have the digest TrustRoot
// when one is given. Between syncs the Replica keeps that state, so a
// poll with no new entries costs one checkpoint request and no replay; a
// replica changed by anyone else is verified and replayed from entry 0
// again.
type Replica struct {
	Dir       string       // the ledger directory; the log is Dir/authority
	Source    tiles.Source // where the log is published
	VKey      string       // the trusted checkpoint verifier key (required for a new replica)
	TrustRoot string       // sha256:<hex> of the first root record, or empty
	// Policy, when set, is the witness policy (c2sp.org/tlog-policy) the
	// published checkpoint must meet before anything is stored. Then the
	// latest checkpoint each policy witness with a URL cosigned is fetched
	// (its tlog-witness monitoring URL) and proven consistent with the
	// published one (ledger.CheckViews): a split view refuses the sync
	// (*SplitViewError), and Views says what each witness showed.
	Policy *formats.Policy
	// Witnesses fetches the witnesses' checkpoints (nil: a zero Client).
	Witnesses *witness.Client
	// Views are the witnesses' checkpoints compared after the last Sync.
	Views []WitnessView

	st       *delegation.State
	verified []byte
}

// SplitViewError: a policy witness cosigned a checkpoint of the log that
// is not consistent with the replica's: the log (or its key) showed
// another history to that witness. The embedded *ledger.InconsistencyError
// carries both signed checkpoints (Found is the witness's) and the proof
// that fails. The replica keeps what it synced under the quorum.
type SplitViewError struct {
	Witness string
	*ledger.InconsistencyError
}

func (e *SplitViewError) Error() string {
	return fmt.Sprintf("witness %s holds another view of the log: %v", e.Witness, e.InconsistencyError)
}

// Unwrap returns the *ledger.InconsistencyError.
func (e *SplitViewError) Unwrap() error { return e.InconsistencyError }

// WitnessView is what one policy witness holds for the log, compared with
// the replica after a sync.
type WitnessView struct {
	Name  string `json:"name"`
	Size  int64  `json:"size"` // its latest cosigned checkpoint's size (-1 if none was read)
	Err   error  `json:"-"`    // nil: consistent with the replica
	Error string `json:"error,omitempty"`
}

// Sync fetches what the source published since the last sync and stores
// it, or nothing. Errors: those of ledger.Sync, a *delegation.RecordError
// for an entry the authority rules refuse (with its index), and
// ErrRootUntrusted.
func (r *Replica) Sync(ctx context.Context) (ledger.Synced, error) {
	res, err := r.sync(ctx)
	if errors.Is(err, ledger.ErrHistoryRepaired) {
		// The replica's history was corrected: replay it at the right
		// times, once.
		res, err = r.sync(ctx)
	}
	return res, err
}

// compareWitnesses fetches each policy witness's latest checkpoint of the
// log (its tlog-witness monitoring URL) and proves it consistent with the
// published one (ledger.CheckViews, from the source's hash tiles). A
// witness that cannot be read, or whose view cannot be decided yet, is
// reported in Views and is not an error; a split view is a
// *SplitViewError, which refuses the sync before anything is stored.
func (r *Replica) compareWitnesses(ctx context.Context, published []byte, vkey string) error {
	r.Views = nil
	c := r.Witnesses
	if c == nil {
		c = &witness.Client{}
	}
	origin, _, _ := strings.Cut(string(published), "\n")
	var split error
	for _, w := range r.Policy.SubmissionWitnesses() {
		v := WitnessView{Name: w.Name, Size: -1}
		seen, err := c.Checkpoint(ctx, w.URL, origin)
		if err == nil {
			if cp, perr := ledger.OpenCheckpoint(seen, vkey); perr == nil {
				v.Size = cp.Size
			}
			err = ledger.CheckViews(ctx, published, seen, vkey, r.Source)
		}
		var ie *ledger.InconsistencyError
		if errors.As(err, &ie) && split == nil {
			split = &SplitViewError{Witness: w.Name, InconsistencyError: ie}
		}
		if v.Err = err; err != nil {
			v.Error = err.Error()
		}
		r.Views = append(r.Views, v)
	}
	return split
}

func (r *Replica) sync(ctx context.Context) (ledger.Synced, error) {
	var checkViews func([]byte, string) error
	if r.Policy != nil {
		checkViews = func(published []byte, vkey string) error { return r.compareWitnesses(ctx, published, vkey) }
	}
	res, err := ledger.Sync(ctx, filepath.Join(r.Dir, ledger.AuthorityDir), r.Source, ledger.SyncOptions{
		VKey: r.VKey, History: true, Verified: r.verified, Policy: r.Policy, CheckPublished: checkViews,
		Check: func(fresh bool) (ledger.EntryFunc, func() error) {
			if fresh || r.st == nil {
				r.st = delegation.NewState()
			}
			fn, wait := parallelApply(r.st, nil)
			return fn, func() error {
				if err := wait(); err != nil {
					return err
				}
				if err := (Trust{TrustRoot: r.TrustRoot}).checkRoot(&Authority{State: r.st}); err != nil {
					return fmt.Errorf("%w: %v", ErrRootUntrusted, err)
				}
				return nil
			}
		},
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
	return res, nil
}

// SyncDecisions grows the decision-log replica at dir from src: the log's
// checkpoints verify under vkey and every decision decodes strictly (as
// ImportLedger checks a decisions section). Errors: those of ledger.Sync,
// and a *delegation.RecordError for a malformed decision.
func SyncDecisions(ctx context.Context, dir string, src tiles.Source, vkey string) (ledger.Synced, error) {
	return ledger.Sync(ctx, dir, src, ledger.SyncOptions{VKey: vkey, Check: func(bool) (ledger.EntryFunc, func() error) {
		return decodeDecisions()
	}})
}

// PublishDecisions publishes the runner's decision log into the
// directory to, as `writ ledger publish --decisions` does
// (ledger.Log.Publish): a runner whose admission server holds the log
// publishes it this way, while it serves. The log is this runner's own,
// whose head it checks before every append; Publish checks the signed
// root and every published entry's leaf hash. Errors: those of Publish.
func (r *Runner) PublishDecisions(to string) (ledger.Published, error) {
	return r.dec.Publish(to)
}
