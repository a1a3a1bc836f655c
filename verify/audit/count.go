package audit

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify"
	"golang.org/x/mod/semver"
)

// counting wraps fn so that every entry counts towards the audit's
// progress (the logs' sizes are the total).
func (rep *Report) counting(fn ledger.EntryFunc) ledger.EntryFunc {
	if rep.opts.Progress == nil {
		return fn
	}
	return func(i int64, e []byte, accepted time.Time) error {
		rep.progressDone++
		if rep.progressDone%ProgressEvery == 0 {
			rep.opts.Progress(rep.progressDone, rep.progressTotal)
		}
		if fn == nil {
			return nil
		}
		return fn(i, e, accepted)
	}
}

// authorityEvent notes authority that ended in the period.
func (rep *Report) authorityEvent(a *delegation.Applied) {
	if p, ok := a.Record.(*schemas.Pin); ok {
		rep.Provenance.AddPin(a.Index, p)
	}
	rep.Traffic.authorityEvent(rep.opts, a, rep.opts.Now())
}

// count counts decision i, and refuses an instruction id admitted twice.
func (rep *Report) count(i int64, d *schemas.Decision) error {
	if admitted := verify.AdmittedID(d); admitted != "" {
		// A runner admits an instruction id once (rules.Replay): a second
		// admission means its replay memory was removed or bypassed.
		var id [16]byte
		if _, err := hex.Decode(id[:], []byte(admitted)); err != nil {
			return &delegation.RecordError{Index: i, Rule: delegation.RuleMalformed, Err: err}
		}
		if first, ok := rep.admitted[id]; ok {
			return &delegation.RecordError{Index: i, Rule: rules.Replay, Err: fmt.Errorf("instruction %s was admitted twice, at decisions %d and %d: the runner's replay memory was removed or bypassed", d.InstructionID, first, i)}
		}
		rep.admitted[id] = i
	}
	if err := rep.checkMarks(i, d); err != nil {
		return err
	}
	if !rep.opts.inPeriod(d.Time) {
		rep.Traffic.OutsidePeriod++
		return nil
	}
	rep.Traffic.add(i, d)
	rep.note(i, d)
	rep.Provenance.AddDecision(d)
	rep.ByVerdict[string(d.Verdict)]++
	rep.ByRule[d.Rule]++
	rep.Decisions++
	if d.Verdict != schemas.VerdictRefused && d.Rule != rules.OK {
		rep.WouldRefuse++
	}
	return nil
}

// heldMark is an artifact's high-water mark and the decision that
// recorded it.
type heldMark struct {
	version string
	index   int64
}

// checkMarks refuses a decision that records a lower high-water mark for
// an artifact than an earlier decision did: a runner's marks only rise, so
// a fall means its memory of the artifact was removed or bypassed, and a
// rollback may have run.
func (rep *Report) checkMarks(i int64, d *schemas.Decision) error {
	for a, v := range d.HighWater {
		prev, ok := rep.marks[a]
		if ok && semver.Compare(v, prev.version) < 0 {
			return &delegation.RecordError{Index: i, Rule: rules.Rollback, Err: fmt.Errorf(
				"the high-water mark of %s fell from %s (decision %d) to %s: the runner's memory of it was removed or bypassed", a, prev.version, prev.index, v)}
		}
		if !ok || semver.Compare(v, prev.version) > 0 {
			rep.marks[a] = heldMark{v, i}
		}
	}
	return nil
}
