package delegation

import (
	"fmt"
	"slices"
	"time"

	"github.com/writ-ledger/writ/rules"

	"github.com/writ-ledger/writ/schemas"
)

// The time rule (see the package doc, "Time").
const (
	// MaxClockSkew is how far after the time the ledger accepted a record
	// its issued_at may be: clocks differ, but a record dated later could
	// reach into a window that has not opened yet.
	MaxClockSkew = 5 * time.Minute

	// MaxRecordAge is how far before the time the ledger accepted a record
	// its issued_at may be: a signed act is appended within a day, or
	// signed again; one withheld longer cannot be replayed into the log.
	MaxRecordAge = 24 * time.Hour
)

// RuleIssuedAt refuses a record whose issued_at is more than MaxClockSkew
// after, or more than MaxRecordAge before, the time the ledger accepted
// it.
const RuleIssuedAt = rules.IssuedAt

// IssuedAt returns the issued_at of an authority record, in Unix seconds
// (0 for a kind without one).
func IssuedAt(r schemas.Record) int64 {
	switch x := r.(type) {
	case *schemas.Root:
		return x.IssuedAt
	case *schemas.Delegation:
		return x.IssuedAt
	case *schemas.Pin:
		return x.IssuedAt
	case *schemas.Instruction:
		return x.IssuedAt
	case *schemas.Revocation:
		return x.IssuedAt
	case *schemas.Issuer:
		return x.IssuedAt
	case *schemas.Quarantine:
		return x.IssuedAt
	case *schemas.Downgrade:
		return x.IssuedAt
	}
	return 0
}

// instants are the two times an act is judged at: the issued_at its
// signer wrote, and the time the ledger accepted it, which the signer
// does not choose. Authority must hold at both.
type instants [2]time.Time

func (t instants) issued() time.Time   { return t[0] }
func (t instants) accepted() time.Time { return t[1] }

// checkIssuedAt refuses a record whose issued_at is outside
// [accepted − MaxRecordAge, accepted + MaxClockSkew], and returns the
// instants to judge it at otherwise.
func checkIssuedAt(index int64, kind schemas.Kind, issued int64, accepted time.Time) (instants, error) {
	t := instants{time.Unix(issued, 0), accepted}
	switch {
	case t.issued().After(accepted.Add(MaxClockSkew)):
		return t, refusef(index, RuleIssuedAt, "%s record issued_at %s is more than %s after the ledger accepted it (%s)",
			kind, unixUTC(issued), MaxClockSkew, accepted.UTC().Format(time.RFC3339))
	case t.issued().Before(accepted.Add(-MaxRecordAge)):
		return t, refusef(index, RuleIssuedAt, "%s record issued_at %s is more than %s before the ledger accepted it (%s)",
			kind, unixUTC(issued), MaxRecordAge, accepted.UTC().Format(time.RFC3339))
	}
	return t, nil
}

// authorizeAt is Authorize at both instants: the grant valid at the later
// one, or the first denial (a signer must hold the authority when it
// says it acted and when the ledger accepted the act).
func (s *State) authorizeAt(r Request, at instants) (*Grant, error) {
	var g *Grant
	for i, t := range at {
		r.At = t
		var err error
		if g, err = s.Authorize(r); err != nil {
			d := *denialOf(err)
			d.Reason += [2]string{" (the record's issued_at)", " (when the ledger accepted the record)"}[i]
			return nil, &d
		}
	}
	return g, nil
}

// rootInForce refuses an act the current root's threshold signed unless
// its signers held the root's authority at both instants: at acceptance,
// the current root unexpired; at issued_at, the root in force then (the
// last one issued by then; the current one, or an earlier one the
// rotation replaced) unexpired, with its threshold of its own distinct,
// unrevoked keys among the signers. Keys that became root keys only later
// held no authority at an earlier issued_at.
func (s *State) rootInForce(a *Applied, at instants) error {
	root := s.Root()
	for _, t := range at {
		if t.Unix() >= root.Record.Expires {
			return refusef(a.Index, RuleRootExpired, "%s record judged at %s, when root version %d had expired (at %s)",
				a.Kind, t.UTC().Format(time.RFC3339), root.Record.Version, unixUTC(root.Record.Expires))
		}
	}
	then := s.rootAt(at.issued())
	switch {
	case then == nil:
		return refusef(a.Index, RuleOutsideWindow, "%s record issued at %s, before the first root was issued (%s)",
			a.Kind, at.issued().UTC().Format(time.RFC3339), unixUTC(s.roots[0].Record.IssuedAt))
	case then == root:
		return nil
	case at.issued().Unix() >= then.Record.Expires:
		return refusef(a.Index, RuleRootExpired, "%s record issued at %s, when root version %d had expired (at %s)",
			a.Kind, at.issued().UTC().Format(time.RFC3339), then.Record.Version, unixUTC(then.Record.Expires))
	}
	var n uint64
	for _, k := range then.Keys {
		if _, gone := s.revoked[k.ID()]; !gone && slices.ContainsFunc(a.Signers, k.Equal) {
			n++
		}
	}
	if n < then.Record.Threshold {
		return refusef(a.Index, RuleOutsideWindow, "%s record issued at %s, when root version %d was in force, signed by %d of its keys, threshold %d: the signers did not hold the root's authority then",
			a.Kind, at.issued().UTC().Format(time.RFC3339), then.Record.Version, n, then.Record.Threshold)
	}
	return nil
}

// rootAt returns the root in force at t by issue time: the last root of
// the chain issued at or before t (rotations are issued in version order),
// or nil before the first.
func (s *State) rootAt(t time.Time) *RootEntry {
	var out *RootEntry
	for _, r := range s.roots {
		if r.Record.IssuedAt <= t.Unix() {
			out = r
		}
	}
	return out
}

// String names the two instants, for a reason.
func (t instants) String() string {
	return fmt.Sprintf("issued at %s, accepted at %s", t.issued().UTC().Format(time.RFC3339), t.accepted().UTC().Format(time.RFC3339))
}
