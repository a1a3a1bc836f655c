package delegation

import "fmt"

// Lines renders the answer for people, one line each (writ authority
// explain's text): allowed, "yes" then one line per link of the chain,
// numbered from 1 ("  1. delegation at index I (DIGEST) to key K, issued
// by BY"); not allowed, "no: RULE" and "reason: REASON".
func (e *Explanation) Lines() []string {
	if !e.Allowed {
		return []string{"no: " + e.Rule, "reason: " + e.Reason}
	}
	lines := []string{"yes"}
	for i, l := range e.Chain {
		lines = append(lines, fmt.Sprintf("  %d. delegation at index %v (%v) to key %v, issued by %v", i+1, l.Index, l.Digest, l.Key, l.IssuedBy))
	}
	return lines
}
