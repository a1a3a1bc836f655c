package replica

import (
	"fmt"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/rules"
	"golang.org/x/mod/sumdb/tlog"
)

// sectionKey returns the key an export's section must verify under, and
// the local log's verified checkpoint (checkLocal: resumed says
// opts.Resume resumed the caller's check state from it): the local log's
// key when there is a local log, else given (the trusted one; nil for
// none), else the section's own (parsed from the export here, once),
// which must hold the public key opts.TrustedKeys gives, if any. A
// section under another key is a *TrustError (rules.VKeyMismatch). With
// opts.Checkpoint, the section's checkpoint is judged too.
func sectionKey(sec *ExportedLog, local *ledger.Log, given *formats.LogKey, opts ImportOptions) (_ *formats.LogKey, _ formats.Checkpoint, resumed bool, _ error) {
	var localCP formats.Checkpoint
	key := given
	if local != nil {
		var err error
		if key, localCP, resumed, err = checkLocal(local, sec, given, opts.Resume); err != nil {
			return nil, localCP, false, err
		}
	}
	key, err := sectionKeyOf(sec, key, opts)
	return key, localCP, resumed, err
}

// sectionKeyOf returns the key the section must verify under, given the
// local log's or the trusted one (nil: the section's own), as sectionKey
// says.
func sectionKeyOf(sec *ExportedLog, key *formats.LogKey, opts ImportOptions) (*formats.LogKey, error) {
	if pub, ok := opts.TrustedKeys[sec.Name]; ok && key == nil {
		if got, err := formats.VerifierPublicKey(sec.VKey); err != nil || !got.Equal(pub) {
			return nil, &ledger.TrustError{Rule: rules.VKeyMismatch, Log: sec.Name, What: "the export's verifier key (its public key is not the trusted one)",
				Expected: "public key " + pub.ID()[:16], Found: ledger.KeyName(sec.VKey), Err: fmt.Errorf("%w: %w", ledger.ErrVKeyMismatch, ErrExport)}
		}
	}
	if key == nil {
		k, err := formats.ParseLogKey(sec.VKey)
		if err != nil {
			return nil, fmt.Errorf("%w: the %s section's key: %w", ErrExport, sec.Name, err)
		}
		key = k
	}
	if sec.VKey != key.String() {
		// The replica stores the section's key: it must be the one trusted.
		return nil, &ledger.TrustError{Rule: rules.VKeyMismatch, Log: sec.Name, What: "the export's verifier key (the section names it; not the trusted one)",
			Expected: ledger.KeyName(key.String()), Found: ledger.KeyName(sec.VKey), Err: fmt.Errorf("%w: %w", ledger.ErrVKeyMismatch, ErrExport)}
	}
	if opts.Checkpoint != nil {
		if _, err := formats.OpenCheckpoint([]byte(sec.Checkpoint), key); err != nil {
			return nil, fmt.Errorf("the export's %s checkpoint: %w", sec.Name, err)
		}
		if err := opts.Checkpoint(sec.Name, []byte(sec.Checkpoint), key); err != nil {
			return nil, err
		}
	}
	return key, nil
}

// checkLocal verifies the local log a section is imported into, under
// given (the trusted key; nil for the local log's own), and returns the
// key the section must verify under (the local log's) and the local
// checkpoint. When resume (if not nil) resumes the caller's check state
// from the log (it verified the log's signed checkpoint and what the log
// persisted), only the signed checkpoint is read again (resumed true);
// else the whole log is verified. A key given that is not the local
// log's, or an export of another key, is a *TrustError
// (rules.VKeyMismatch).
func checkLocal(local *ledger.Log, sec *ExportedLog, given *formats.LogKey, resume func(string, *ledger.Log) (bool, error)) (*formats.LogKey, formats.Checkpoint, bool, error) {
	if given != nil && given.String() != local.VerifierKey() {
		return nil, formats.Checkpoint{}, false, ledger.KeyMismatch(sec.Name, "the local "+sec.Name+" log", given.String(), local.VerifierKey())
	}
	resumed := false
	if resume != nil && local.Size() > 0 {
		var err error
		if resumed, err = resume(sec.Name, local); err != nil {
			return nil, formats.Checkpoint{}, false, fmt.Errorf("the local %s log: %w", sec.Name, err)
		}
	}
	var cp formats.Checkpoint
	var err error
	if resumed {
		if cp, err = local.SignedHead(); err == nil && (cp.Size != local.Size() || cp.Origin != local.Origin()) {
			err = &ledger.IntegrityError{Index: -1, What: "signed checkpoint", Expected: fmt.Sprintf("%s size %d", local.Origin(), local.Size()), Found: fmt.Sprintf("%s size %d", cp.Origin, cp.Size)}
		}
	} else {
		cp, err = local.Verify(local.Key(), nil)
	}
	if err != nil {
		return nil, formats.Checkpoint{}, false, fmt.Errorf("the local %s log: %w", sec.Name, err)
	}
	if local.HasHistory() != sec.History {
		return nil, formats.Checkpoint{}, false, fmt.Errorf("%w: the export's %s log and the local one differ in keeping a checkpoint history", ErrExport, sec.Name)
	}
	if sec.VKey != local.VerifierKey() {
		return nil, formats.Checkpoint{}, false, &ledger.TrustError{Rule: rules.VKeyMismatch, Log: sec.Name, What: "the export's verifier key (the local log's is trusted)",
			Expected: ledger.KeyName(local.VerifierKey()), Found: ledger.KeyName(sec.VKey), Err: fmt.Errorf("%w: %w", ledger.ErrVKeyMismatch, ErrExport)}
	}
	return local.Key(), cp, resumed, nil
}

// floorWatch notes, as a section's entries are verified, the root of its
// tree at the size of each of floors, to check that it extends them.
type floorWatch struct {
	floors []Floor
	roots  map[int64]tlog.Hash
}

// see notes the root of tree after entry i was added.
func (w *floorWatch) see(i int64, tree *ledger.TreeBuilder) {
	for _, fl := range w.floors {
		if i+1 == fl.Size {
			if w.roots == nil {
				w.roots = map[int64]tlog.Hash{}
			}
			w.roots[fl.Size] = tree.Root()
		}
	}
}

// check returns nil when what, whose verified checkpoint is cp, reached
// and extends every floor, and else the refusal of the first it does not.
func (w *floorWatch) check(what string, cp formats.Checkpoint) error {
	for _, fl := range w.floors {
		if r, ok := w.roots[fl.Size]; fl.Size > 0 && (!ok || r != fl.Hash || (fl.Origin != "" && fl.Origin != cp.Origin)) {
			return fl.Refusal(what, cp)
		}
	}
	return nil
}

// acceptedTimes returns a function giving the time l accepted entry i,
// for i asked in increasing order: the signed time of the history
// checkpoint covering it (ledger.Log.HistoryCovering), verified under k
// with its size the one it is stored under. It reads one history
// checkpoint per batch and keeps only the last. It does not check the
// checkpoint's root (ledger.Log.Verify does). Errors: an
// *ledger.IntegrityError (ledger.ErrTampered, with ledger.ErrHistory),
// Badger's.
func acceptedTimes(l *ledger.Log, k *formats.LogKey) func(i int64) (time.Time, error) {
	var cur formats.TimedCheckpoint
	have := false
	return func(i int64) (time.Time, error) {
		if have && i < cur.Size {
			return cur.Time, nil
		}
		size, signed, _, err := l.HistoryCovering(i)
		if err != nil {
			return time.Time{}, err
		}
		tc, err := k.Cosig().Open(signed)
		if err != nil {
			return time.Time{}, &ledger.IntegrityError{Index: i, What: fmt.Sprintf("history checkpoint of size %d", size), Detail: fmt.Sprintf("%v: %v", ledger.ErrHistory, err)}
		}
		if tc.Size != size {
			return time.Time{}, &ledger.IntegrityError{Index: i, What: "history checkpoint size", Expected: fmt.Sprint(size), Found: fmt.Sprint(tc.Size), Detail: ledger.ErrHistory.Error()}
		}
		cur, have = tc, true
		return cur.Time, nil
	}
}
