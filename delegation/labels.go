package delegation

import (
	"fmt"
	"strings"
)

// KeyLabels says, for the keys the state names, what each holds, for
// people reading a report of key ids: "root key (version N)" for a key
// of a root, else the actions and scope of the latest delegation to it
// ("instruct: streams deploy/*; machines runner-* (delegation at index
// 3)"), "revoked" after it when the key or that delegation is. At most
// max keys are labelled, the roots' first, then the latest delegations'.
func (s *State) KeyLabels(max int) map[string]string {
	out := map[string]string{}
	for i := len(s.roots) - 1; i >= 0 && len(out) < max; i-- {
		for _, k := range s.roots[i].Keys {
			if _, done := out[k.ID()]; !done && len(out) < max {
				out[k.ID()] = fmt.Sprintf("root key (version %d)", s.roots[i].Record.Version)
			}
		}
	}
	for i := len(s.grants) - 1; i >= 0 && len(out) < max; i-- {
		g := s.grants[i]
		if _, done := out[g.Key.ID()]; done {
			continue
		}
		acts := make([]string, len(g.Record.Actions))
		for j, a := range g.Record.Actions {
			acts[j] = string(a)
		}
		label := strings.Join(acts, ",")
		for _, x := range []struct {
			name string
			list []string
		}{{"streams", g.Record.Streams}, {"machines", g.Record.Machines}, {"artifacts", g.Record.Artifacts}} {
			if len(x.list) > 0 {
				label += fmt.Sprintf("; %s %s", x.name, strings.Join(x.list, ","))
			}
		}
		label += fmt.Sprintf(" (delegation at index %d)", g.Index)
		_, keyRevoked := s.revoked[g.Key.ID()]
		if _, delRevoked := s.revoked[g.Digest]; keyRevoked || delRevoked {
			label += ", revoked"
		}
		out[g.Key.ID()] = label
	}
	return out
}

// ChainedKeys returns the keys whose delegations rest on the record with
// this digest: the delegate of that delegation and of every delegation
// whose chain passes through it (Grant.Chain), each once, in log order;
// none for a digest that is not a delegation. A monitor uses it to tell
// who a revocation of a delegation reaches.
func (s *State) ChainedKeys(digest string) []string {
	var out []string
	seen := map[string]bool{}
	for _, g := range s.grants {
		for x := g; x != nil; x = x.Parent {
			if x.Digest == digest && !seen[g.Key.ID()] {
				seen[g.Key.ID()] = true
				out = append(out, g.Key.ID())
				break
			}
		}
	}
	return out
}
