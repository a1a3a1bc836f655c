package delegation

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// Rule ids for authority answers. Package verify uses the same ids in its
// rule vocabulary.
const (
	RuleNoDelegation  = "no-delegation"  // the key holds no delegation at all
	RuleOutOfScope    = "out-of-scope"   // delegations exist but none covers the action and scope
	RuleOutsideWindow = "outside-window" // a covering delegation exists but not at this instant
	RuleRootExpired   = "root-expired"   // the root itself has expired
)

// ErrUnauthorized is wrapped by every *Denial.
var ErrUnauthorized = errors.New("not authorized")

// Denial is a no from Authorize: the rule id and a reason naming the key,
// the action and the values that did not match.
type Denial struct {
	Rule   string
	Reason string
}

// Error returns "rule: reason".
func (d *Denial) Error() string { return d.Rule + ": " + d.Reason }

// Unwrap returns ErrUnauthorized.
func (d *Denial) Unwrap() error { return ErrUnauthorized }

// Request asks whether Key may do Action at At. Stream and Machine are
// matched for "instruct" (and "quarantine"); Artifact for "pin".
type Request struct {
	Key      sign.PublicKey
	Action   string
	Stream   string
	Machine  string
	Artifact string
	At       time.Time
}

// Grant is a delegation accepted into the state.
type Grant struct {
	Index   int64  // ledger position of the delegation record
	Digest  string // its record digest
	Record  *schemas.Delegation
	Key     sign.PublicKey // the delegate
	Signers []string       // key ids of the root keys that signed it
}

// covers reports whether g's patterns cover the request's scope.
func (g *Grant) covers(r Request) bool {
	any := func(pats []string, v string) bool {
		return slices.ContainsFunc(pats, func(p string) bool { return schemas.Match(p, v) })
	}
	switch r.Action {
	case "pin":
		return any(g.Record.Artifacts, r.Artifact)
	case "instruct", "quarantine":
		return any(g.Record.Streams, r.Stream) && any(g.Record.Machines, r.Machine)
	}
	return true
}

func (g *Grant) validAt(t time.Time) bool {
	u := t.Unix()
	return g.Record.NotBefore <= u && u < g.Record.NotAfter
}

// Authorize answers r from the state: the grant that allows it, or a
// *Denial with the first failing rule, checked in this order: root expired
// (RuleRootExpired), no delegation for the key (RuleNoDelegation), none
// granting the action for this scope (RuleOutOfScope), none valid at r.At
// (RuleOutsideWindow).
func (s *State) Authorize(r Request) (*Grant, error) {
	if s.root == nil {
		return nil, &Denial{RuleNoDelegation, "the ledger has no root"}
	}
	if r.At.Unix() >= s.root.Record.Expires {
		return nil, &Denial{RuleRootExpired, fmt.Sprintf("root version %d expired at %s", s.root.Record.Version, unixUTC(s.root.Record.Expires))}
	}
	var mine []*Grant
	for _, g := range s.grants {
		if g.Key.Equal(r.Key) {
			mine = append(mine, g)
		}
	}
	if len(mine) == 0 {
		return nil, &Denial{RuleNoDelegation, fmt.Sprintf("key %s holds no delegation in this ledger", r.Key.ID())}
	}
	var covering []*Grant
	for _, g := range mine {
		if slices.Contains(g.Record.Actions, r.Action) && g.covers(r) {
			covering = append(covering, g)
		}
	}
	if len(covering) == 0 {
		return nil, &Denial{RuleOutOfScope, fmt.Sprintf("no delegation of key %s grants %q for %s", r.Key.ID(), r.Action, scopeText(r))}
	}
	for _, g := range covering {
		if g.validAt(r.At) {
			return g, nil
		}
	}
	g := covering[len(covering)-1]
	return nil, &Denial{RuleOutsideWindow, fmt.Sprintf("delegation at ledger index %d for key %s is valid from %s until %s, not at %s",
		g.Index, r.Key.ID(), unixUTC(g.Record.NotBefore), unixUTC(g.Record.NotAfter), r.At.UTC().Format(time.RFC3339))}
}

func scopeText(r Request) string {
	switch r.Action {
	case "pin":
		return fmt.Sprintf("artifact %q", r.Artifact)
	case "instruct", "quarantine":
		return fmt.Sprintf("stream %q on machine %q", r.Stream, r.Machine)
	}
	return "this scope"
}

func unixUTC(sec int64) string { return time.Unix(sec, 0).UTC().Format(time.RFC3339) }
