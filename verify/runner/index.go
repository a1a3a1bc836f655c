package runner

import (
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
)

// keyIndexed points at the latest decision whose lookup keys were written:
// every decision the Runner appends carries it, so the index is whole
// exactly when it points at the last decision.
const keyIndexed = "indexed"

// indexKeys returns the lookup keys decision d (at its index) contributes
// to the runner's memory: its admitted instruction id, its work claim, and
// the high-water mark of each artifact it records one for.
func indexKeys(d *schemas.Decision) []string {
	var keys []string
	if id := verify.AdmittedID(d); id != "" {
		keys = append(keys, keyReplay+id)
	}
	if d.Claim != nil {
		keys = append(keys, keyClaim+d.Stream)
	}
	for _, a := range slices.Sorted(maps.Keys(d.HighWater)) {
		keys = append(keys, keyMark+a)
	}
	return keys
}

// rebuildIndex brings the decision log's lookup keys up to date when they
// do not cover every decision: a log restored from an export (whose keys
// are not exported), or one appended to without them. The decisions are
// read through a full verification of the log under its key (the runner's
// own, checked when the log was opened), and every decision the index
// lacks is indexed again, in log order.
func rebuildIndex(dec *ledger.Log) error {
	n := dec.Size()
	if n == 0 {
		return nil
	}
	last, ok, err := dec.Lookup(keyIndexed)
	if err != nil {
		// A damaged mark: index everything again; the full verification
		// below reports what is wrong with the log, if anything.
		last, ok = 0, false
	}
	if ok && last == n-1 {
		return nil
	}
	from := int64(0)
	if ok {
		from = last + 1
	}
	var pairs []ledger.LookupPair
	_, err = dec.Verify(dec.Key(), func(i int64, entry []byte, _ time.Time) error {
		if i < from {
			return nil
		}
		rec, err := schemas.Decode(schemas.KindDecision, entry)
		if err != nil {
			return fmt.Errorf("decision %d: %w", i, err)
		}
		for _, k := range indexKeys(rec.(*schemas.Decision)) {
			pairs = append(pairs, ledger.LookupPair{Key: k, Index: i})
		}
		if len(pairs) >= 1<<16 {
			if err := dec.SetLookups(pairs); err != nil {
				return err
			}
			pairs = pairs[:0]
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rebuilding the replay and claim index: %w", err)
	}
	return dec.SetLookups(append(pairs, ledger.LookupPair{Key: keyIndexed, Index: n - 1}))
}

// runnerMarks is the Runner's Marks: the marks this process read or
// recorded, else the decision the lookup key mark/<artifact> points to,
// read through the runner's signed checkpoint. Safe for concurrent use.
type runnerMarks struct{ r *Runner }

// Mark implements verify.Marks.
func (m runnerMarks) Mark(artifact string) (string, error) {
	r := m.r
	r.marksMu.Lock()
	v, ok := r.marks[artifact]
	r.marksMu.Unlock()
	if ok {
		return v, nil
	}
	i, found, err := r.dec.Lookup(keyMark + artifact)
	if err != nil {
		return "", err
	}
	if found {
		entry, err := r.dec.VerifiedEntry(i)
		if err != nil {
			return "", err
		}
		rec, err := schemas.Decode(schemas.KindDecision, entry)
		if err != nil {
			return "", fmt.Errorf("decision %d: %w", i, err)
		}
		if v = rec.(*schemas.Decision).HighWater[artifact]; v == "" {
			return "", fmt.Errorf("the decision log's index says decision %d holds the high-water mark of %s, and it does not", i, artifact)
		}
	}
	r.marksMu.Lock()
	defer r.marksMu.Unlock()
	if cur, ok := r.marks[artifact]; ok {
		return cur, nil // recorded by a decision queued meanwhile: newer
	}
	r.marks[artifact] = v
	return v, nil
}

// remember records the marks a decision queued by this process holds,
// and reports whether any changed. Marks only rise: the decision was
// judged against the current ones.
func (r *Runner) remember(hw map[string]string) bool {
	r.marksMu.Lock()
	defer r.marksMu.Unlock()
	changed := false
	for a, v := range hw {
		if r.marks[a] != v {
			r.marks[a], changed = v, true
		}
	}
	return changed
}

// LastTrusted returns the authority checkpoint the runner trusted at its
// latest decision (nil before the first decision that recorded one). The
// decision log is signed by the runner key, so this memory is as good as
// that key. The origin is the authority origin the decision log was named
// after.
func LastTrusted(decisions *ledger.Log) (*formats.Checkpoint, error) {
	d, err := lastDecision(decisions)
	if err != nil || d == nil || d.AuthorityRoot == "" {
		return nil, err
	}
	root, err := hex.DecodeString(d.AuthorityRoot)
	if err != nil {
		return nil, err
	}
	origin := decisions.Origin()
	if i := strings.LastIndex(origin, "/decisions/"); i > 0 {
		origin = origin[:i]
	}
	cp := &formats.Checkpoint{Origin: origin, Size: d.AuthoritySize}
	copy(cp.Hash[:], root)
	return cp, nil
}

// lastDecision returns the decision log's latest decision, or nil. The
// entry is read only after it is proven to be in the tree the runner's
// latest signed checkpoint commits to: what the runner remembers (its
// trusted authority checkpoint, its high-water marks) cannot be edited on
// disk without the runner key.
func lastDecision(decisions *ledger.Log) (*schemas.Decision, error) {
	n := decisions.Size()
	if n == 0 {
		return nil, nil
	}
	entry, err := decisions.VerifiedEntry(n - 1)
	if err != nil {
		return nil, err
	}
	rec, err := schemas.Decode(schemas.KindDecision, entry)
	if err != nil {
		return nil, fmt.Errorf("decision %d: %w", n-1, err)
	}
	return rec.(*schemas.Decision), nil
}

// sameMachine refuses (ErrMachineChanged) a runner given another
// machine name than its latest decision's, unless cfg.RenameMachine.
func sameMachine(decisions *ledger.Log, cfg verify.Config) error {
	d, err := lastDecision(decisions)
	if err != nil {
		return fmt.Errorf("%w: reading the last decision: %w", ErrNotRecorded, err)
	}
	if d == nil || d.Machine == cfg.Machine || cfg.RenameMachine {
		return nil
	}
	return fmt.Errorf("%w: its decisions are for machine %q (the latest at decision %d), not %q: give --machine %s, or add --rename-machine to rename this runner on purpose; nothing was judged or recorded",
		ErrMachineChanged, d.Machine, decisions.Size()-1, cfg.Machine, d.Machine)
}
