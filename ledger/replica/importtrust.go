package replica

import (
	"fmt"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/rules"
	"golang.org/x/mod/sumdb/tlog"
)

// sectionKey returns the key an export's section must verify under, and
// the local log's verified checkpoint (with record given each of its
// entries' accepted times): the local log's key when there is a local
// log, else vkey (the trusted one), else one holding the public key
// opts.TrustedKeys gives, else the section's own. A section under another
// key is a *TrustError (rules.VKeyMismatch). With opts.Checkpoint, the
// section's checkpoint is judged too.
func sectionKey(sec *ExportedLog, local *ledger.Log, vkey string, opts ImportOptions, record ledger.EntryFunc) (string, formats.Checkpoint, error) {
	var localCP formats.Checkpoint
	if local != nil {
		var err error
		if vkey, localCP, err = checkLocal(local, sec, vkey, record); err != nil {
			return "", localCP, err
		}
	}
	if pub, ok := opts.TrustedKeys[sec.Name]; ok && vkey == "" {
		if got, err := formats.VerifierPublicKey(sec.VKey); err != nil || !got.Equal(pub) {
			return "", localCP, &ledger.TrustError{Rule: rules.VKeyMismatch, Log: sec.Name, What: "the export's verifier key (its public key is not the trusted one)",
				Expected: "public key " + pub.ID()[:16], Found: ledger.KeyName(sec.VKey), Err: fmt.Errorf("%w: %w", ledger.ErrVKeyMismatch, ErrExport)}
		}
		vkey = sec.VKey
	}
	if vkey == "" {
		vkey = sec.VKey
	}
	if sec.VKey != vkey {
		// The replica stores the section's key: it must be the one trusted.
		return "", localCP, &ledger.TrustError{Rule: rules.VKeyMismatch, Log: sec.Name, What: "the export's verifier key (the section names it; not the trusted one)",
			Expected: ledger.KeyName(vkey), Found: ledger.KeyName(sec.VKey), Err: fmt.Errorf("%w: %w", ledger.ErrVKeyMismatch, ErrExport)}
	}
	if opts.Checkpoint != nil {
		key, err := formats.ParseLogKey(vkey)
		if err != nil {
			return "", localCP, fmt.Errorf("the export's %s checkpoint: %w", sec.Name, err)
		}
		if _, err := formats.OpenCheckpoint([]byte(sec.Checkpoint), key); err != nil {
			return "", localCP, fmt.Errorf("the export's %s checkpoint: %w", sec.Name, err)
		}
		if err := opts.Checkpoint(sec.Name, []byte(sec.Checkpoint), key); err != nil {
			return "", localCP, err
		}
	}
	return vkey, localCP, nil
}

// checkLocal verifies the local log a section is imported into, under
// vkey (the trusted key; "" for the local log's own), with record given
// each entry's accepted time, and returns the key the section must verify
// under and the local checkpoint. A vkey that is not the local log's, or
// an export of another key, is a *TrustError (rules.VKeyMismatch).
func checkLocal(local *ledger.Log, sec *ExportedLog, vkey string, record ledger.EntryFunc) (string, formats.Checkpoint, error) {
	if vkey == "" {
		vkey = local.VerifierKey()
	} else if vkey != local.VerifierKey() {
		return "", formats.Checkpoint{}, ledger.KeyMismatch(sec.Name, "the local "+sec.Name+" log", vkey, local.VerifierKey())
	}
	cp, err := local.Verify(local.Key(), record)
	if err != nil {
		return "", formats.Checkpoint{}, fmt.Errorf("the local %s log: %w", sec.Name, err)
	}
	if local.HasHistory() != sec.History {
		return "", formats.Checkpoint{}, fmt.Errorf("%w: the export's %s log and the local one differ in keeping a checkpoint history", ErrExport, sec.Name)
	}
	if sec.VKey != local.VerifierKey() {
		return "", formats.Checkpoint{}, &ledger.TrustError{Rule: rules.VKeyMismatch, Log: sec.Name, What: "the export's verifier key (the local log's is trusted)",
			Expected: ledger.KeyName(local.VerifierKey()), Found: ledger.KeyName(sec.VKey), Err: fmt.Errorf("%w: %w", ledger.ErrVKeyMismatch, ErrExport)}
	}
	return vkey, cp, nil
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
