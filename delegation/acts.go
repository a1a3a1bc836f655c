package delegation

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// applyDelegation accepts a delegation signed by the current root's
// threshold (in force at both instants), or by one delegate holding a
// "delegate" grant that it attenuates (see findParent).
func (s *State) applyDelegation(a *Applied, r *schemas.Delegation, at instants) error {
	key, err := sign.NewPublicKey(r.Key)
	if err != nil {
		return refuse(a.Index, RuleMalformed, fmt.Errorf("delegation.key: %w", err))
	}
	g := &Grant{Index: a.Index, Digest: a.Digest, Record: r, Key: key}
	ok, ids, err := s.rootAct(a, at, true)
	switch {
	case err != nil:
		return err
	case ok:
		g.Signers = ids
	case len(a.Signers) != 1:
		return refusef(a.Index, RuleMalformed, "a re-delegation has exactly one signer, has %d", len(a.Signers))
	default:
		parent, err := s.findParent(a.Index, a.Signers[0], r, at)
		if err != nil {
			return err
		}
		g.Parent, g.Signers = parent, []string{a.Signers[0].ID()}
	}
	appendTo(s, &s.grants, g)
	setMap(s, s.byDigest, a.Digest, any(g))
	s.trust(key)
	return nil
}

// findParent returns the grant that lets signer issue child: it grants
// "delegate" with depth at least 1, its whole chain is valid at both
// instants (the child's issued_at and its acceptance), and the child
// attenuates it: a subset of its actions, patterns within its patterns, a
// window inside its window, and a depth strictly smaller. The first
// failure is reported.
func (s *State) findParent(index int64, signer sign.PublicKey, child *schemas.Delegation, at instants) (*Grant, error) {
	p, err := s.authorizeAt(Request{Key: signer, Action: schemas.ActionDelegate}, at)
	if err != nil {
		d := denialOf(err)
		return nil, refuse(index, d.Rule, fmt.Errorf("the signer may not delegate: %s", d.Reason))
	}
	// authorizeAt returned a valid "delegate" grant; any of the signer's
	// valid ones may stand behind the child.
	var why string
	for _, g := range s.grants {
		if !g.Key.Equal(signer) || !slices.Contains(g.Record.Actions, schemas.ActionDelegate) || s.chainDenial(g, at.issued()) != nil || s.chainDenial(g, at.accepted()) != nil {
			continue
		}
		if why = attenuates(child, g.Record); why == "" {
			return g, nil
		}
	}
	if why == depthZero {
		return nil, refuse(index, RuleNotAttenuated, fmt.Errorf("no delegation of key %s (e.g. ledger index %d) covers this one: %w", signer.ID(), p.Index, errNoRedelegation))
	}
	return nil, refusef(index, RuleNotAttenuated, "no delegation of key %s (e.g. ledger index %d) covers this one: %s", signer.ID(), p.Index, why)
}

// errNoRedelegation is wrapped by a RuleNotAttenuated refusal whose
// parent delegation has re-delegation depth 0: no narrowing helps, the
// parent itself must be delegated again with a depth of 1 or more.
var errNoRedelegation = errors.New(depthZero)

const depthZero = "the parent's re-delegation depth is 0"

// attenuates returns "" when child is a strict narrowing of parent, or
// what it exceeds.
func attenuates(child, parent *schemas.Delegation) string {
	for _, a := range child.Actions {
		if !slices.Contains(parent.Actions, a) {
			return fmt.Sprintf("action %q is not among the parent's %v", a, parent.Actions)
		}
	}
	switch {
	case parent.Depth < 1:
		return depthZero
	case child.Depth >= parent.Depth:
		return fmt.Sprintf("depth %d is not below the parent's %d", child.Depth, parent.Depth)
	case child.NotBefore < parent.NotBefore || child.NotAfter > parent.NotAfter:
		return fmt.Sprintf("window %s..%s is not inside the parent's %s..%s", unixUTC(child.NotBefore), unixUTC(child.NotAfter),
			unixUTC(parent.NotBefore), unixUTC(parent.NotAfter))
	case !patternsWithin(child.Streams, parent.Streams):
		return fmt.Sprintf("streams %v are not within the parent's %v", child.Streams, parent.Streams)
	case !patternsWithin(child.Machines, parent.Machines):
		return fmt.Sprintf("machines %v are not within the parent's %v", child.Machines, parent.Machines)
	case !patternsWithin(child.Artifacts, parent.Artifacts):
		return fmt.Sprintf("artifacts %v are not within the parent's %v", child.Artifacts, parent.Artifacts)
	case len(parent.Builders) > 0 && (len(child.Builders) == 0 || slices.ContainsFunc(child.Builders, func(c schemas.Builder) bool {
		return !slices.ContainsFunc(parent.Builders, func(p schemas.Builder) bool { return p.Admits(c) })
	})):
		return fmt.Sprintf("builders %v are not within the parent's %v (a delegation that demands provenance passes the demand on)", child.Builders, parent.Builders)
	}
	return ""
}

// applyRevocation accepts a revocation by the root threshold, or by one
// key that holds "revoke" and could have issued the target: the signer
// of a delegation's parent grant (for that delegation, or its delegate's
// key), or a key that may pin the artifact (for a pin), at both instants.
// Issuer records are revoked by the root threshold only. Revocation is
// permanent.
func (s *State) applyRevocation(a *Applied, r *schemas.Revocation, at instants) error {
	if _, done := s.revoked[r.Target]; done {
		return refusef(a.Index, RuleDuplicate, "%s is already revoked", r.Target)
	}
	target, isKey := s.byDigest[r.Target], schemas.ValidKeyID(r.Target)
	if target == nil && !isKey {
		return refusef(a.Index, RuleUnknownTarget, "no delegation, pin or issuer record with digest %s in this ledger", r.Target)
	}
	if isKey {
		if _, known := s.keys[r.Target]; !known {
			return refusef(a.Index, RuleUnknownTarget, "no record in this ledger names key %s", r.Target)
		}
	}
	if root := s.Root(); isKey && slices.ContainsFunc(root.Keys, func(k sign.PublicKey) bool { return k.ID() == r.Target }) {
		// A root key is replaced, never revoked: revoking one would leave
		// a threshold that may no longer be reachable, and a root whose
		// keys are not all its own. The current root's keys change only
		// by rotation.
		return refusef(a.Index, RuleRootKey, "key %s is a key of root version %d (ledger index %d): a root key is retired by rotating the root, not revoked",
			r.Target, root.Record.Version, root.Index)
	}
	ok, _, err := s.rootAct(a, at, true)
	if err != nil {
		return err
	}
	if !ok {
		if len(a.Signers) != 1 {
			return refusef(a.Index, RuleThreshold, "a revocation is signed by the root threshold or by one key, not %d", len(a.Signers))
		}
		signer := a.Signers[0]
		if _, err := s.authorizeAt(Request{Key: signer, Action: schemas.ActionRevoke}, at); err != nil {
			d := denialOf(err)
			return refuse(a.Index, d.Rule, fmt.Errorf("the signer may not revoke: %s", d.Reason))
		}
		if !s.couldIssue(signer, r.Target, target, at.issued()) || !s.couldIssue(signer, r.Target, target, at.accepted()) {
			return refusef(a.Index, RuleOutOfScope, "key %s could not have issued %s, so it may not revoke it", signer.ID(), r.Target)
		}
	}
	setMap(s, s.revoked, r.Target, a.Index)
	return nil
}

// couldIssue reports whether signer could have issued the revocation's
// target at t.
func (s *State) couldIssue(signer sign.PublicKey, id string, target any, t time.Time) bool {
	issuerOf := func(g *Grant) bool {
		return g.Parent != nil && g.Parent.Key.Equal(signer) && s.chainDenial(g.Parent, t) == nil
	}
	switch x := target.(type) {
	case *Grant:
		return issuerOf(x)
	case *PinEntry:
		_, err := s.Authorize(Request{Key: signer, Action: schemas.ActionPin, Artifact: x.Record.Artifact, At: t, anyBuilder: true})
		return err == nil
	case *IssuerEntry, *DowngradeEntry:
		return false
	}
	// A key id: the signer delegated to that key.
	return slices.ContainsFunc(s.grants, func(g *Grant) bool { return g.Key.ID() == id && issuerOf(g) })
}

// applyIssuer accepts an issuer record signed by the root threshold.
func (s *State) applyIssuer(a *Applied, r *schemas.Issuer, at instants) error {
	if ok, _, err := s.rootAct(a, at, false); err != nil {
		return err
	} else if !ok {
		return refusef(a.Index, RuleThreshold, "an issuer record needs the root threshold (%d), no root key signed it", s.Root().Record.Threshold)
	}
	e := &IssuerEntry{Index: a.Index, Digest: a.Digest, Record: r}
	setMap(s, s.issuers, r.Issuer, e)
	setMap(s, s.byDigest, a.Digest, any(e))
	return nil
}

// applyDowngrade accepts a downgrade record signed by the root threshold.
func (s *State) applyDowngrade(a *Applied, r *schemas.Downgrade, at instants) error {
	if ok, _, err := s.rootAct(a, at, false); err != nil {
		return err
	} else if !ok {
		return refusef(a.Index, RuleThreshold, "a downgrade record needs the root threshold (%d), no root key signed it", s.Root().Record.Threshold)
	}
	e := &DowngradeEntry{Index: a.Index, Digest: a.Digest, Record: r}
	appendTo(s, &s.downgrades, e)
	setMap(s, s.byDigest, a.Digest, any(e))
	return nil
}

// applyQuarantine accepts a quarantine or lift signed by the root
// threshold or by one key holding "quarantine" for the machine (at both
// instants). It replaces the machine's current act only when issued no
// earlier than the ledger accepted that act (a lift signed before the
// quarantine it would end is stale), and, while the root threshold's
// quarantine drains the machine, only by another act of the root
// threshold: a delegate cannot undo or shorten the root's quarantine.
func (s *State) applyQuarantine(a *Applied, r *schemas.Quarantine, at instants) error {
	ok, _, err := s.rootAct(a, at, true)
	if err != nil {
		return err
	}
	if !ok {
		if err := s.applySigned(a, Request{Action: schemas.ActionQuarantine, Machine: r.Machine}, at); err != nil {
			return err
		}
	}
	if cur := s.quarantines[r.Machine]; cur != nil {
		switch {
		case r.IssuedAt < cur.Accepted.Unix():
			return refusef(a.Index, RuleSuperseded, "this quarantine act for %s was issued at %s, before the ledger accepted the act in force (ledger index %d, at %s)",
				r.Machine, unixUTC(r.IssuedAt), cur.Index, cur.Accepted.UTC().Format(time.RFC3339))
		case cur.ByRoot && !ok && cur.drains(at.accepted()):
			return refusef(a.Index, RuleThreshold, "the root threshold's quarantine of %s (ledger index %d) is in force; only the root threshold replaces or lifts it",
				r.Machine, cur.Index)
		}
	}
	setMap(s, s.quarantines, r.Machine, &QuarantineEntry{Index: a.Index, Record: r, ByRoot: ok, Accepted: a.Accepted})
	return nil
}
