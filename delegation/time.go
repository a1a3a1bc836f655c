package delegation

import (
	"fmt"
	"time"

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
const RuleIssuedAt = "issued-at-range"

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
			d := *err.(*Denial)
			d.Reason += [2]string{" (the record's issued_at)", " (when the ledger accepted the record)"}[i]
			return nil, &d
		}
	}
	return g, nil
}

// rootInForce refuses an act of the root threshold when the root in force
// has expired at either instant (at expires it already has), or when the
// act is dated before that root was issued: its keys held no authority
// then.
func (s *State) rootInForce(a *Applied, at instants) error {
	root := s.Root()
	if at.issued().Unix() < root.Record.IssuedAt {
		return refusef(a.Index, RuleOutsideWindow, "%s record issued at %s, before root version %d, whose keys sign it, was issued (%s)",
			a.Kind, at.issued().UTC().Format(time.RFC3339), root.Record.Version, unixUTC(root.Record.IssuedAt))
	}
	for _, t := range at {
		if t.Unix() >= root.Record.Expires {
			return refusef(a.Index, RuleRootExpired, "%s record judged at %s, when root version %d had expired (at %s)",
				a.Kind, t.UTC().Format(time.RFC3339), root.Record.Version, unixUTC(root.Record.Expires))
		}
	}
	return nil
}

// String names the two instants, for a reason.
func (t instants) String() string {
	return fmt.Sprintf("issued at %s, accepted at %s", t.issued().UTC().Format(time.RFC3339), t.accepted().UTC().Format(time.RFC3339))
}
