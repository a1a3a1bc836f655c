package monitor

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// Watch is what a monitor watches: key ids (or prefixes of at least 8
// hex digits), and stream, artifact and machine patterns (path.Match
// syntax: '*' within a segment). A record touches a pattern when either
// matches the other (a delegation's pattern "deploy/*" touches the
// watched stream "deploy/web", and the watched "deploy/*" touches a
// delegation's "deploy/web"). Alert lists the kinds of Event that make
// Run report an alert, or "any".
type Watch struct {
	Keys, Streams, Artifacts, Machines []string
	Alert                              []string
}

// ErrWatch is wrapped by every error of Watch.Check.
var ErrWatch = errors.New("invalid watch")

// AlertKinds are the values Watch.Alert takes.
var AlertKinds = []string{"any", "root", "delegation", "revocation", "pin", "downgrade", "quarantine", "issuer"}

// Check refuses a key that is not a key id or a prefix of at least 8
// lowercase hex digits, a pattern that does not parse, an alert kind not
// in AlertKinds, and a watch of nothing. Errors name the field and rule.
func (w *Watch) Check() error {
	for _, k := range w.Keys {
		if len(k) < 8 || len(k) > 64 || strings.Trim(k, "0123456789abcdef") != "" {
			return fmt.Errorf("%w: key %q: a key id or a prefix of at least 8 lowercase hex digits", ErrWatch, k)
		}
	}
	for _, p := range slices.Concat(w.Streams, w.Artifacts, w.Machines) {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("%w: pattern %q: %w", ErrWatch, p, err)
		}
	}
	for _, a := range w.Alert {
		if !slices.Contains(AlertKinds, a) {
			return fmt.Errorf("%w: alert %q: one of %v", ErrWatch, a, AlertKinds)
		}
	}
	if len(w.Keys)+len(w.Streams)+len(w.Artifacts)+len(w.Machines) == 0 {
		return fmt.Errorf("%w: nothing to watch: give a key, a stream, an artifact or a machine", ErrWatch)
	}
	return nil
}

// alerts reports whether an event of kind k is one to alert on.
func (w *Watch) alerts(k schemas.Kind) bool {
	return slices.Contains(w.Alert, "any") || slices.Contains(w.Alert, string(k))
}

// lookups answer, for a revocation, whether the monitor reported the
// record it revokes, and whose delegations rest on it
// (delegation.State.ChainedKeys).
type lookups struct {
	reported func(digest string) bool
	chained  func(digest string) []string
}

// touches lists what of the watch rec touches, signed by signers (key
// ids). A revocation touches a watched key it names, or whose
// delegations rest on the delegation it names, and a record reported
// before. Root records touch every watch.
func (w *Watch) touches(rec schemas.Record, signers []string, l lookups) []string {
	var hit []string
	key := func(ids ...string) {
		for _, id := range ids {
			for _, k := range w.Keys {
				if id != "" && strings.HasPrefix(id, k) && !slices.Contains(hit, "key "+k) {
					hit = append(hit, "key "+k)
				}
			}
		}
	}
	pat := func(kind string, watched, found []string) {
		for _, p := range watched {
			if slices.ContainsFunc(found, func(f string) bool { return overlap(p, f) }) {
				hit = append(hit, kind+" "+p)
			}
		}
	}
	key(signers...)
	switch r := rec.(type) {
	case *schemas.Root:
		hit = append(hit, "root")
		key(rawIDs(r.Keys...)...)
	case *schemas.Delegation:
		key(rawIDs(r.Key)...)
		pat("stream", w.Streams, r.Streams)
		pat("artifact", w.Artifacts, r.Artifacts)
		pat("machine", w.Machines, r.Machines)
	case *schemas.Revocation:
		key(r.Target)
		if l.chained != nil {
			key(l.chained(r.Target)...)
		}
		if l.reported(r.Target) {
			hit = append(hit, "a record reported before")
		}
	case *schemas.Pin:
		pat("artifact", w.Artifacts, []string{r.Artifact})
	case *schemas.Downgrade:
		pat("artifact", w.Artifacts, []string{r.Artifact})
	case *schemas.Quarantine:
		pat("machine", w.Machines, []string{r.Machine})
	case *schemas.Instruction:
		pat("stream", w.Streams, []string{r.Stream})
		pat("machine", w.Machines, []string{r.Machine})
	}
	return hit
}

// overlap reports whether two patterns (or names) may name one thing,
// erring towards yes (a monitor would rather report too much): as many
// '/'-separated segments ('*' never crosses one), and in each the same
// text, one matching the other, or both with a wildcard ("*/web" and
// "deploy/*" both name deploy/web).
func overlap(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	if len(as) != len(bs) {
		return false
	}
	wild := func(s string) bool { return strings.ContainsAny(s, "*?[") }
	for i := range as {
		m1, _ := path.Match(as[i], bs[i])
		m2, _ := path.Match(bs[i], as[i])
		if !(as[i] == bs[i] || m1 || m2 || wild(as[i]) && wild(bs[i])) {
			return false
		}
	}
	return true
}

// rawIDs are the key ids of raw Ed25519 keys ("" for one that is not).
func rawIDs(raw ...[]byte) []string {
	out := make([]string, len(raw))
	for i, b := range raw {
		if k, err := sign.NewPublicKey(b); err == nil {
			out[i] = k.ID()
		}
	}
	return out
}
