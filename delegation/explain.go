package delegation

import (
	"errors"
	"time"

	"github.com/writ-ledger/writ/schemas"
)

// Explanation is the answer to "may this key do this act?" with its
// reasons (State.Explain). Its JSON is writ authority explain's result:
// times are RFC 3339, UTC, whole seconds.
type Explanation struct {
	Key     string         `json:"key" doc:"the key's id"`
	Action  schemas.Action `json:"action" doc:"the action asked about"`
	At      string         `json:"at" doc:"the time asked about, RFC 3339"`
	Allowed bool           `json:"allowed" doc:"the answer"`
	// Chain is the delegations behind an allowed act, the key's own
	// first, the one the root threshold signed last (never empty when
	// allowed).
	Chain []ChainLink `json:"chain,omitempty" doc:"when allowed: the delegation chain, the key's own first: each link's actions, digest, index, issued_by, key, not_after, not_before"`
	// Rule and Reason are the denial's, when not allowed.
	Rule   string `json:"rule,omitempty" doc:"when not allowed: the rule that denies it"`
	Reason string `json:"reason,omitempty" doc:"when not allowed: why"`
}

// ChainLink is one delegation of an allowed chain. Its fields are
// declared in the order of their JSON names.
type ChainLink struct {
	Actions   []schemas.Action `json:"actions"`
	Digest    string           `json:"digest"`    // the delegation record's digest
	Index     int64            `json:"index"`     // its ledger position
	IssuedBy  string           `json:"issued_by"` // "the root threshold", or "key <id>"
	Key       string           `json:"key"`       // the delegate's key id
	NotAfter  string           `json:"not_after"`
	NotBefore string           `json:"not_before"`
}

// Explain answers r as Authorize does and says why: allowed with the
// delegation chain, or not with the rule and reason. When r is denied it
// returns the explanation and the *Denial; any other error of Authorize
// with a nil explanation.
func (s *State) Explain(r Request) (*Explanation, error) {
	e := &Explanation{Key: r.Key.ID(), Action: r.Action, At: r.At.UTC().Format(time.RFC3339)}
	g, err := s.Authorize(r)
	var d *Denial
	if errors.As(err, &d) {
		e.Rule, e.Reason = d.Rule, d.Reason
		return e, err
	} else if err != nil {
		return nil, err
	}
	e.Allowed = true
	for _, x := range g.Chain() {
		by := "the root threshold"
		if x.Parent != nil {
			by = "key " + x.Parent.Key.ID()
		}
		e.Chain = append(e.Chain, ChainLink{Index: x.Index, Digest: x.Digest, Key: x.Key.ID(), IssuedBy: by,
			Actions: x.Record.Actions, NotBefore: time.Unix(x.Record.NotBefore, 0).UTC().Format(time.RFC3339),
			NotAfter: time.Unix(x.Record.NotAfter, 0).UTC().Format(time.RFC3339)})
	}
	return e, nil
}
