package verify

import (
	"fmt"

	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/schemas"
)

// keyIndexed points at the latest decision whose lookup keys were written:
// every decision the Runner appends carries it, so the index is whole
// exactly when it points at the last decision.
const keyIndexed = "indexed"

// admittedID returns the instruction id decision d admitted, or "" when it
// admitted none (a refusal, or a dispatch that never parsed): the one
// definition replay protection, its index and the audit share.
func admittedID(d *schemas.Decision) string {
	if d.Verdict == Refused {
		return ""
	}
	return d.InstructionID
}

// indexKeys returns the lookup keys decision d (at its index) contributes
// to the runner's memory: its admitted instruction id, and its work claim.
func indexKeys(d *schemas.Decision) []string {
	var keys []string
	if id := admittedID(d); id != "" {
		keys = append(keys, keyReplay+id)
	}
	if d.Claim != nil {
		keys = append(keys, keyClaim+d.Stream)
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
	_, err = dec.Verify(dec.VerifierKey(), func(i int64, entry []byte) error {
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
