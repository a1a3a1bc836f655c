package inspect

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// Authority judges d's record, whose bytes are entry, against the ledger
// state st (verified, as verify.OpenAuthority returns it; Authority
// applies the record to it, so the caller discards st afterwards) at
// time at. Record.Ledger says whether ledger append would accept it now,
// or the rule it would refuse it under (delegation.State.Apply: every
// signature verified, every authority rule). Each signer gets what st
// says of its key: a key of a root (Signer.RootKey), or the answer to
// "may this key do this record's act?" (Signer.Authority,
// delegation.State.Explain) — given only when the ledger would accept
// the record, so that no signer of a record it refuses (a forged
// signature, a delegation wider than its parent) is shown acting under a
// delegation. Other formats are left as they are. The error is one
// Explain returns other than a denial (a bug). index >= 0 says entry is
// that entry of the ledger, read from its verified log: it is not
// judged again (LedgerVerdict.Entry).
func Authority(d *Description, entry []byte, index int64, st *delegation.State, at time.Time) error {
	if d.Record == nil || d.Format != FormatRecord {
		return nil
	}
	if err := explainSigners(d, st, at); err != nil {
		return err
	}
	if index >= 0 {
		d.Record.Ledger = &LedgerVerdict{Accepted: true, Entry: &index}
		return nil
	}
	_, err := st.Apply(entry, at)
	v := &LedgerVerdict{Accepted: err == nil}
	if re := (*delegation.RecordError)(nil); errors.As(err, &re) {
		v.Rule, v.Reason = re.Rule, re.Error()
	} else if err != nil {
		v.Rule, v.Reason = "internal", err.Error()
	}
	d.Record.Ledger = v
	if !v.Accepted {
		for i := range d.Record.Signers {
			d.Record.Signers[i].Authority = nil
		}
	}
	return nil
}

// explainSigners sets each signer's RootKey or Authority.
func explainSigners(d *Description, st *delegation.State, at time.Time) error {
	req, ok := request(d.Record)
	for i := range d.Record.Signers {
		s := &d.Record.Signers[i]
		if root := rootOf(st, s.KeyID); root != "" {
			s.RootKey = root
			continue
		}
		if !ok {
			continue
		}
		key, known := st.Key(s.KeyID)
		if !known {
			s.Authority = &delegation.Explanation{Key: s.KeyID, Action: req.Action, At: at.UTC().Format(time.RFC3339),
				Rule: delegation.RuleNoDelegation, Reason: fmt.Sprintf("key %s holds no delegation in this ledger", s.KeyID)}
			continue
		}
		req.Key, req.At = key, at
		e, err := st.Explain(req)
		if d := (*delegation.Denial)(nil); err != nil && !errors.As(err, &d) {
			return err
		}
		s.Authority = e
	}
	return nil
}

// rootOf names the root whose keys hold id ("" when none): the latest
// such root first.
func rootOf(st *delegation.State, id string) string {
	roots := st.Roots()
	for i := len(roots) - 1; i >= 0; i-- {
		r := roots[i]
		if slices.ContainsFunc(r.Keys, func(k sign.PublicKey) bool { return k.ID() == id }) {
			state := "in force"
			if i != len(roots)-1 {
				state = "retired"
			}
			return fmt.Sprintf("root version %d (ledger index %d, %s)", r.Record.Version, r.Index, state)
		}
	}
	return ""
}

// request is the act a record's signer performs, as delegation.Request
// asks it (without key and time); false for a record no delegation
// authorizes (root, decision, downgrade: root-signed or a runner's).
func request(r *Record) (delegation.Request, bool) {
	switch rec := r.rec.(type) {
	case *schemas.Delegation:
		return delegation.Request{Action: schemas.ActionDelegate}, true
	case *schemas.Pin:
		return delegation.Request{Action: schemas.ActionPin, Artifact: rec.Artifact, Builder: rec.Builder()}, true
	case *schemas.Instruction:
		return delegation.Request{Action: schemas.ActionInstruct, Stream: rec.Stream, Machine: rec.Machine}, true
	case *schemas.Revocation:
		return delegation.Request{Action: schemas.ActionRevoke}, true
	case *schemas.Quarantine:
		return delegation.Request{Action: schemas.ActionQuarantine, Machine: rec.Machine}, true
	case *schemas.Issuer:
		return delegation.Request{Action: schemas.ActionIssuer}, true
	}
	return delegation.Request{}, false
}
