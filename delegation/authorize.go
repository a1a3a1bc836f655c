package delegation

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// Rule ids for authority answers and refused records: the ids of package
// rules, which package verify's vocabulary shares.
const (
	RuleNoDelegation  = rules.NoDelegation  // the key holds no delegation at all
	RuleOutOfScope    = rules.OutOfScope    // delegations exist but none covers the action and scope
	RuleOutsideWindow = rules.OutsideWindow // a covering delegation exists but not at this instant
	RuleRevoked       = rules.Revoked       // the key, or a delegation on its chain, is revoked
	RuleRootExpired   = rules.RootExpired   // the root in force has expired
)

// ErrUnauthorized is wrapped by every *Denial.
var ErrUnauthorized = errors.New("not authorized")

// Denial is a no from Authorize: the rule id and a reason naming the key,
// the action and the values that did not match.
type Denial struct {
	Rule   string
	Reason string
	// Act, when not empty, is the next act this denial calls for instead
	// of its rule's (a key retired by a root rotation).
	Act string
}

// Error returns "rule: reason".
func (d *Denial) Error() string { return d.Rule + ": " + d.Reason }

// Unwrap returns ErrUnauthorized.
func (d *Denial) Unwrap() error { return ErrUnauthorized }

// Request asks whether Key may do Action at At. Stream and Machine are
// matched for instruct and quarantine (Stream is ignored for quarantine);
// Artifact for pin.
type Request struct {
	Key      sign.PublicKey
	Action   schemas.Action
	Stream   string
	Machine  string
	Artifact string
	// Builder, for pin: the builder the pin's provenance vouches as,
	// its id and key (schemas.Pin.Builder; zero without one), matched
	// against a delegation's builders.
	Builder schemas.Builder
	At      time.Time
	// anyBuilder: match a pin's scope without its builder (to tell a
	// demand for provenance from another scope).
	anyBuilder bool
}

// Grant is a delegation accepted into the state.
type Grant struct {
	Index   int64  // ledger position of the delegation record
	Digest  string // its record digest
	Record  *schemas.Delegation
	Key     sign.PublicKey // the delegate
	Parent  *Grant         // the delegation its signer held; nil when the root threshold signed it
	Signers []string       // key ids that signed it
}

// covers reports whether g's patterns cover the request's scope.
func (g *Grant) covers(r Request) bool {
	match := func(pats []string, v string) bool {
		return slices.ContainsFunc(pats, func(p string) bool { return schemas.Match(p, v) })
	}
	switch r.Action {
	case schemas.ActionPin:
		b := g.Record.Builders
		return match(g.Record.Artifacts, r.Artifact) && (r.anyBuilder || len(b) == 0 || slices.ContainsFunc(b, func(x schemas.Builder) bool { return x.Admits(r.Builder) }))
	case schemas.ActionInstruct:
		return match(g.Record.Streams, r.Stream) && match(g.Record.Machines, r.Machine)
	case schemas.ActionQuarantine:
		return match(g.Record.Machines, r.Machine)
	}
	return true
}

func (g *Grant) validAt(t time.Time) bool {
	u := t.Unix()
	return g.Record.NotBefore <= u && u < g.Record.NotAfter
}

// Chain returns the grant and its ancestors, the root-issued one last.
func (g *Grant) Chain() []*Grant {
	var out []*Grant
	for x := g; x != nil; x = x.Parent {
		out = append(out, x)
	}
	return out
}

// chainDenial checks every link of g's chain at t: each window covers t,
// and neither the delegation nor its delegate's key is revoked. It
// returns the first failure.
func (s *State) chainDenial(g *Grant, t time.Time) *Denial {
	for _, x := range g.Chain() {
		if i, ok := s.revoked[x.Digest]; ok {
			return &Denial{Rule: RuleRevoked, Reason: fmt.Sprintf("delegation at ledger index %d was revoked at index %d", x.Index, i)}
		}
		if i, ok := s.revoked[x.Key.ID()]; ok {
			return &Denial{Rule: RuleRevoked, Reason: fmt.Sprintf("key %s was revoked at ledger index %d", x.Key.ID(), i)}
		}
		if !x.validAt(t) {
			return &Denial{Rule: RuleOutsideWindow, Reason: fmt.Sprintf("delegation at ledger index %d for key %s is valid from %s until %s, not at %s",
				x.Index, x.Key.ID(), unixUTC(x.Record.NotBefore), unixUTC(x.Record.NotAfter), t.UTC().Format(time.RFC3339))}
		}
	}
	return nil
}

// noDelegation says why key holds no delegation: a key of a root that a
// rotation retired is named as such (it signed for the root it was in,
// and holds nothing since); any other key was never delegated.
func (s *State) noDelegation(key sign.PublicKey) (reason, act string) {
	cur := s.Root()
	for i := len(s.roots) - 2; i >= 0; i-- {
		old := s.roots[i]
		if slices.ContainsFunc(old.Keys, key.Equal) && (cur == nil || !slices.ContainsFunc(cur.Keys, key.Equal)) {
			return fmt.Sprintf("key %s was a key of root version %d (ledger index %d) and was retired by the rotation to root version %d (ledger index %d); it holds no delegation in this ledger",
					key.ID(), old.Record.Version, old.Index, cur.Record.Version, cur.Index),
				"sign with a key of the root in force, or one it delegated (`writ authority explain` shows what a key holds)"
		}
	}
	return fmt.Sprintf("key %s holds no delegation in this ledger", key.ID()), ""
}

// denialOf returns err, which Authorize returns only as a *Denial, as
// one; anything else (a bug) becomes a denial under rules.Internal that
// names it, never a panic.
func denialOf(err error) *Denial {
	var d *Denial
	if errors.As(err, &d) {
		return d
	}
	return &Denial{Rule: rules.Internal, Reason: fmt.Sprintf("authorization failed with an error that is not a denial: %v", err)}
}

// Authorize answers r: the grant (with its chain, Grant.Chain) that allows
// it, or a *Denial with the first failing rule, checked in this order: the
// root in force has expired at r.At (RuleRootExpired: at expires it
// already has), the key is revoked (RuleRevoked), it holds no delegation
// (RuleNoDelegation), none grants the action for this scope
// (RuleOutOfScope), none has a chain valid at r.At (the denial of the
// last candidate: RuleRevoked or RuleOutsideWindow).
func (s *State) Authorize(r Request) (*Grant, error) {
	if d := s.rootExpiredAt(r.At); d != nil {
		return nil, d
	}
	if i, ok := s.revoked[r.Key.ID()]; ok {
		return nil, &Denial{Rule: RuleRevoked, Reason: fmt.Sprintf("key %s was revoked at ledger index %d", r.Key.ID(), i)}
	}
	var mine, covering []*Grant
	for _, g := range s.grants {
		if g.Key.Equal(r.Key) {
			mine = append(mine, g)
			if slices.Contains(g.Record.Actions, r.Action) && g.covers(r) {
				covering = append(covering, g)
			}
		}
	}
	if len(mine) == 0 {
		reason, act := s.noDelegation(r.Key)
		return nil, &Denial{Rule: RuleNoDelegation, Reason: reason, Act: act}
	}
	if len(covering) == 0 {
		return nil, &Denial{Rule: RuleOutOfScope, Reason: fmt.Sprintf("no delegation of key %s grants %q for %s", r.Key.ID(), r.Action, scopeText(r))}
	}
	var last *Denial
	for _, g := range covering {
		if last = s.chainDenial(g, r.At); last == nil {
			return g, nil
		}
	}
	return nil, last
}

func scopeText(r Request) string {
	switch r.Action {
	case schemas.ActionPin:
		return fmt.Sprintf("artifact %q", r.Artifact)
	case schemas.ActionInstruct:
		return fmt.Sprintf("stream %q on machine %q", r.Stream, r.Machine)
	case schemas.ActionQuarantine:
		return fmt.Sprintf("machine %q", r.Machine)
	}
	return "this scope"
}

func unixUTC(sec int64) string { return time.Unix(sec, 0).UTC().Format(time.RFC3339) }

// patternWithin reports whether every name child matches is also matched
// by parent: parent matches child's text with each '*' of child read as a
// character only a '*' of parent can absorb. It is sound (never says yes
// wrongly, since a '*' of parent also absorbs any '/'-free expansion of
// child's '*') and may say no to an exotic contained pair; a delegation
// refused for that can be written with its parent's patterns.
func patternWithin(child, parent string) bool {
	return schemas.Match(parent, child)
}

// patternsWithin reports whether each child pattern lies within some
// parent pattern.
func patternsWithin(child, parent []string) bool {
	for _, c := range child {
		if !slices.ContainsFunc(parent, func(p string) bool { return patternWithin(c, p) }) {
			return false
		}
	}
	return true
}
