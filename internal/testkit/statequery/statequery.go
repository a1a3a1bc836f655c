// Package statequery asks an authority state (delegation.State) every
// question its public API answers, over a universe of keys, targets,
// artifacts, machines, issuers and instants, and writes each answer as a
// line: two states that must be the same (one extended from a persisted
// index, one replayed from the whole log) are compared line by line. It
// is for writ's tests only.
package statequery

import (
	"fmt"
	"strings"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// Universe is what the questions range over.
type Universe struct {
	Keys      []sign.PublicKey // Key, Revoked (by key id) and Authorize for each
	Targets   []string         // record digests: Revoked, LowestPinned
	Platforms []string         // LatestPin, LowestPinned (artifact "agent")
	Versions  []string         // Downgrade (artifact "agent")
	Machines  []string         // Quarantine, Authorize
	Issuers   []string         // Issuer
	At        []time.Time      // the instants every timed question is asked at
}

// Answers returns every answer st gives over u, one line each, in a fixed
// order.
func Answers(st *delegation.State, u Universe) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	add("size %d", st.Size())
	for _, r := range st.Roots() {
		add("root %s", rootText(r))
	}
	if r := st.Root(); r != nil {
		add("root in force %s", rootText(r))
	}
	for _, k := range u.Keys {
		got, ok := st.Key(k.ID())
		add("key %s: %v %v", k.ID(), ok, ok && got.Equal(k))
		i, ok := st.Revoked(k.ID())
		add("revoked %s: %v %d", k.ID(), ok, i)
	}
	for _, d := range u.Targets {
		i, ok := st.Revoked(d)
		add("revoked %s: %v %d", d, ok, i)
		for _, p := range u.Platforms {
			add("lowest pinned %s %s: %s", p, d, pinText(st.LowestPinned("agent", p, d)))
		}
	}
	for _, t := range u.At {
		out = append(out, timedAnswers(st, u, t)...)
	}
	return out
}

// timedAnswers are the answers at t.
func timedAnswers(st *delegation.State, u Universe, t time.Time) []string {
	var out []string
	add := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("at %d: ", t.Unix())+fmt.Sprintf(format, args...))
	}
	for _, p := range u.Platforms {
		pin, d := st.LatestPin("agent", p, t)
		add("latest pin %s: %s %s", p, pinText(pin), denialText(d))
	}
	for _, v := range u.Versions {
		if e := st.Downgrade("agent", v, t.Unix()); e != nil {
			add("downgrade %s: entry %d %s", v, e.Index, e.Digest)
		} else {
			add("downgrade %s: none", v)
		}
	}
	for _, m := range u.Machines {
		if q := st.Quarantine(m, t.Unix()); q != nil {
			add("quarantine %s: entry %d by root %v accepted %d until %d", m, q.Index, q.ByRoot, q.Accepted.Unix(), q.Record.Until)
		} else {
			add("quarantine %s: none", m)
		}
	}
	for _, url := range u.Issuers {
		e, d := st.Issuer(url, t)
		if e != nil {
			add("issuer %s: entry %d %s", url, e.Index, e.Digest)
		} else {
			add("issuer %s: none %s", url, denialText(d))
		}
	}
	for _, k := range u.Keys {
		for _, act := range schemas.Actions {
			for _, m := range u.Machines {
				g, err := st.Authorize(delegation.Request{Key: k, Action: act, Stream: "demo", Machine: m, Artifact: "agent", At: t})
				add("authorize %s %s %s: %s", k.ID()[:12], act, m, grantText(g, err))
			}
		}
	}
	return out
}

func rootText(r *delegation.RootEntry) string {
	ids := make([]string, len(r.Keys))
	for i, k := range r.Keys {
		ids[i] = k.ID()[:12]
	}
	return fmt.Sprintf("entry %d %s version %d threshold %d expires %d keys %s", r.Index, r.Digest, r.Record.Version, r.Record.Threshold, r.Record.Expires, strings.Join(ids, ","))
}

func pinText(p *delegation.PinEntry) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("entry %d %s %s %s by %s", p.Index, p.Digest, p.Record.Version, p.Record.Digest, p.Signer[:12])
}

func denialText(d *delegation.Denial) string {
	if d == nil {
		return ""
	}
	return d.Error() + " / " + d.Act
}

func grantText(g *delegation.Grant, err error) string {
	if err != nil {
		return "denied " + err.Error()
	}
	var chain []string
	for _, x := range g.Chain() {
		chain = append(chain, fmt.Sprintf("%d", x.Index))
	}
	return "granted by " + strings.Join(chain, "<-")
}

// Diff returns "" when a and b are the same answers, else the first line
// in which they differ, both ways.
func Diff(a, b []string) string {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("answer %d:\n  %q\n  %q", i, x, y)
		}
	}
	return ""
}
