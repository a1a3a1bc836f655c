package monitor

import (
	"fmt"
	"strings"
	"time"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/schemas"
)

// what says in one line what a record does, text from the record
// escaped (humanize.OneLine).
func what(rec schemas.Record) string {
	at := func(s int64) string { return time.Unix(s, 0).UTC().Format(time.RFC3339) }
	var s string
	switch r := rec.(type) {
	case *schemas.Root:
		s = fmt.Sprintf("root version %d: %d keys, threshold %d, expires %s", r.Version, len(r.Keys), r.Threshold, at(r.Expires))
	case *schemas.Delegation:
		acts := make([]string, len(r.Actions))
		for i, a := range r.Actions {
			acts[i] = string(a)
		}
		s = fmt.Sprintf("delegates %s to key %s", strings.Join(acts, ","), rawIDs(r.Key)[0])
		for _, x := range []struct {
			name string
			list []string
		}{{"streams", r.Streams}, {"machines", r.Machines}, {"artifacts", r.Artifacts}} {
			if len(x.list) > 0 {
				s += fmt.Sprintf("; %s %s", x.name, strings.Join(x.list, ","))
			}
		}
		s += fmt.Sprintf("; from %s until %s, depth %d", at(r.NotBefore), at(r.NotAfter), r.Depth)
	case *schemas.Revocation:
		s = fmt.Sprintf("revokes %s: %s", r.Target, r.Reason)
	case *schemas.Pin:
		s = fmt.Sprintf("pins %s %s for %s: %s, %d bytes, until %s", r.Artifact, r.Version, r.Platform, r.Digest, r.Size, at(r.Expires))
		if r.Provenance != nil {
			s += ", built by " + r.Provenance.Builder
		}
	case *schemas.Downgrade:
		s = fmt.Sprintf("allows %s down to %s until %s: %s", r.Artifact, r.Version, at(r.Expires), r.Reason)
	case *schemas.Quarantine:
		switch {
		case r.Lift:
			s = "lifts the quarantine of machine " + r.Machine
		case r.Until != 0:
			s = fmt.Sprintf("quarantines machine %s until %s", r.Machine, at(r.Until))
		default:
			s = fmt.Sprintf("quarantines machine %s until lifted", r.Machine)
		}
	case *schemas.Instruction:
		s = fmt.Sprintf("instructs stream %s on machine %s to run %s (instruction %s)", r.Stream, r.Machine, r.Agent.Name, r.ID)
	case *schemas.Issuer:
		s = fmt.Sprintf("records token issuer %s (keys %s, audiences %s)", r.Issuer, r.JWKSURI, strings.Join(r.Audiences, ","))
	default:
		s = string(rec.Kind()) + " record"
	}
	return humanize.OneLine(s)
}
