package formats

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// MaxCosignatureSkew is how far in the future (by the verifier's clock) a
// witness's cosignature/v1 timestamp may be and still count:
// c2sp.org/tlog-cosignature lets verifiers reject future timestamps, and a
// future time would otherwise stretch how fresh a checkpoint looks.
const MaxCosignatureSkew = 5 * time.Minute

// ErrQuorum: a checkpoint that the policy's witnesses did not cosign in
// quorum. It is returned wrapped in a *QuorumError carrying the evidence.
var ErrQuorum = errors.New("checkpoint not cosigned by the policy's quorum")

// ErrPolicyLog: a log whose key the policy does not list (when it lists
// any log at all).
var ErrPolicyLog = errors.New("log not in the witness policy")

// WitnessCosignature is one witness's valid cosignature/v1 on a checkpoint:
// the policy's name for the witness and the time it signed (whole seconds).
type WitnessCosignature struct {
	Name string    `json:"name"`
	Time time.Time `json:"time"`
}

// Witnessing is what a policy found on one checkpoint (Policy.Check).
type Witnessing struct {
	// Quorum is the policy's quorum rule, spelled out, e.g.
	// "group q: 2 of [w1 w2 w3]" or "none".
	Quorum string `json:"quorum"`
	// Met reports whether the cosignatures meet the quorum.
	Met bool `json:"met"`
	// Cosigned are the witnesses with a valid cosignature, in policy order.
	Cosigned []WitnessCosignature `json:"cosigned"`
	// Missing are the policy witnesses with no valid cosignature on it.
	Missing []string `json:"missing"`
	// Future are witnesses whose only valid cosignatures are dated more
	// than MaxCosignatureSkew after the verifier's clock: not counted.
	Future []string `json:"future,omitempty"`
	// SameAsLog are witnesses whose key is the log's own: never counted
	// (the log's own cosignature/v1 line is not a witness's).
	SameAsLog []string `json:"same_as_log,omitempty"`
	// Unverified are missing witnesses with a signature line under their
	// key name that does not verify under the policy's key for them: a
	// wrong key in the policy, or a forged line.
	Unverified []string `json:"unverified,omitempty"`
	// Time is the witnessed time: the latest t such that the witnesses
	// that cosigned at or after t meet the quorum on their own. Zero when
	// the quorum is none or not met.
	Time time.Time `json:"time,omitzero"`
	// Recheck, when not zero, is when a cosignature not counted for being
	// dated in the future comes within MaxCosignatureSkew of the
	// verifier's clock: a verifier that caches the result checks again
	// then.
	Recheck time.Time `json:"-"`
}

// QuorumError is ErrQuorum with its evidence: which witnesses cosigned
// and the quorum they missed.
type QuorumError struct {
	Witnessing
}

func (e *QuorumError) Error() string {
	var signed []string
	for _, c := range e.Cosigned {
		signed = append(signed, c.Name)
	}
	msg := fmt.Sprintf("%v: quorum %s; cosigned by [%s]; missing [%s]", ErrQuorum, e.Quorum,
		strings.Join(signed, " "), strings.Join(e.Missing, " "))
	if len(e.Future) > 0 {
		msg += fmt.Sprintf("; not counted, dated in the future: [%s]", strings.Join(e.Future, " "))
	}
	if len(e.Unverified) > 0 {
		msg += fmt.Sprintf("; a line under their name does not verify under the policy's key (a wrong key in the policy?): [%s]", strings.Join(e.Unverified, " "))
	}
	if len(e.SameAsLog) > 0 {
		msg += fmt.Sprintf("; not counted, the log's own key: [%s]", strings.Join(e.SameAsLog, " "))
	}
	return msg
}

// Unwrap returns ErrQuorum.
func (e *QuorumError) Unwrap() error { return ErrQuorum }

// CheckLog returns nil if the policy lists no log or lists k's key under
// k's name, else an error wrapping ErrPolicyLog.
func (p *Policy) CheckLog(k *LogKey) error {
	if len(p.Logs) == 0 {
		return nil
	}
	for _, l := range p.Logs {
		if l.Origin == k.Name() && l.key.Equal(k.PublicKey()) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s", ErrPolicyLog, k)
}

// Check finds the policy witnesses' cosignature/v1 lines
// (c2sp.org/tlog-cosignature) on the signed checkpoint and evaluates the
// quorum (c2sp.org/tlog-policy) at the verifier's time now. It does not
// verify the log's own signature (OpenCheckpoint does); it does check
// that the policy lists the log of key k (CheckLog). Each witness counts
// once, only for a cosignature over this checkpoint's exact body dated at
// most now+MaxCosignatureSkew (its latest such), and never a witness whose
// key is the log's own. The evaluation is linear in the policy's size
// (groups form a tree, ParsePolicy). Errors: ErrPolicyLog, or a
// *QuorumError (wrapping ErrQuorum) when the quorum is not met; the
// Witnessing is returned either way.
func (p *Policy) Check(signed []byte, k *LogKey, now time.Time) (Witnessing, error) {
	w := Witnessing{Quorum: p.describe(p.Quorum), Cosigned: []WitnessCosignature{}, Missing: []string{}}
	if err := p.CheckLog(k); err != nil {
		return w, err
	}
	logKey := k.PublicKey()
	limit := now.Add(MaxCosignatureSkew)
	times := map[string]time.Time{}
	for _, wit := range p.Witnesses {
		t, future, err := wit.verifier.TimeAtMost(signed, limit)
		switch {
		case wit.verifier.Key().Equal(logKey):
			w.SameAsLog = append(w.SameAsLog, wit.Name)
			w.Missing = append(w.Missing, wit.Name)
		case err != nil && !future.IsZero():
			w.Future = append(w.Future, wit.Name)
			w.Missing = append(w.Missing, wit.Name)
			if r := future.Add(-MaxCosignatureSkew); w.Recheck.IsZero() || r.Before(w.Recheck) {
				w.Recheck = r
			}
		case err != nil:
			w.Missing = append(w.Missing, wit.Name)
			if hasSigLineBy(signed, wit.verifier.Name()) {
				w.Unverified = append(w.Unverified, wit.Name)
			}
		default:
			times[wit.Name] = t
			w.Cosigned = append(w.Cosigned, WitnessCosignature{Name: wit.Name, Time: t})
		}
	}
	if p.Quorum == "none" {
		w.Met = true
		return w, nil
	}
	if !p.satisfied(p.Quorum, func(name string) bool { _, ok := times[name]; return ok }) {
		return w, &QuorumError{Witnessing: w}
	}
	w.Met = true
	var ts []time.Time
	for _, t := range times {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b time.Time) int { return b.Compare(a) })
	for _, t := range ts {
		if p.satisfied(p.Quorum, func(name string) bool { at, ok := times[name]; return ok && !at.Before(t) }) {
			w.Time = t
			break
		}
	}
	return w, nil
}

// satisfied evaluates name (a witness or group) given which witnesses
// cosigned. Groups only name earlier lines, so the recursion ends, and
// each name is a member at most once, so each is visited at most once.
func (p *Policy) satisfied(name string, cosigned func(string) bool) bool {
	g, ok := p.groups[name]
	if !ok {
		return cosigned(name)
	}
	n := 0
	for _, m := range g.members {
		if p.satisfied(m, cosigned) {
			n++
		}
	}
	return n >= g.k
}

// describe spells out a quorum name for messages.
func (p *Policy) describe(name string) string {
	g, ok := p.groups[name]
	if !ok {
		if name == "none" {
			return "none"
		}
		return "witness " + name
	}
	return fmt.Sprintf("group %s: %d of [%s]", name, g.k, strings.Join(g.members, " "))
}

// SubmissionWitnesses returns the policy's witnesses that have a URL (a
// tlog-witness submission prefix), in policy order: those a log can ask
// for cosignatures (c2sp.org/tlog-witness add-checkpoint).
func (p *Policy) SubmissionWitnesses() []PolicyWitness {
	var out []PolicyWitness
	for _, w := range p.Witnesses {
		if w.URL != "" {
			out = append(out, w)
		}
	}
	return out
}

// Verifier returns the witness's cosignature/v1 verifier.
func (w PolicyWitness) Verifier() *CosigVerifier { return w.verifier }

// hasSigLineBy reports whether the signature block of the signed note
// holds a signature line (ParseSigLine) by the key name, whether or not
// it verifies.
func hasSigLineBy(signed []byte, name string) bool {
	_, sigs, _ := bytes.Cut(signed, []byte("\n\n"))
	for _, line := range strings.Split(string(sigs), "\n") {
		if sl, err := ParseSigLine(line); err == nil && sl.Name == name {
			return true
		}
	}
	return false
}
