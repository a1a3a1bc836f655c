package verify_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/internal/testkit/statequery"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// The differential test's key pool: root keys, delegates, and a stranger
// no record ever names.
var (
	diffRootKeys     = []byte{1, 2, 3, 4, 5}
	diffDelegateKeys = []byte{10, 11, 12, 13, 14, 15}
	diffStranger     = byte(99)
)

// diffWorld generates the differential test's records: mostly acts its
// model of the ledger expects to be accepted, some deliberately not. The
// model only steers the generator; what is accepted is the reference
// replay's verdict.
type diffWorld struct {
	t       testing.TB
	rng     *rand.Rand
	now     time.Time // the log's clock: every step moves it on
	keys    map[byte]*sign.PrivateKey
	byRaw   map[string]byte
	root    *schemas.Root    // the root in force
	retired []byte           // keys of earlier roots
	grants  []diffGrant      // accepted delegations
	pins    []string         // digests of accepted pins
	digests []string         // digests of every accepted record
	entries [][]byte         // every accepted entry
	quar    map[string]int64 // machine → when its act in force was accepted
	revoked map[string]bool  // targets of accepted revocations
	// rotations, revocations and quarantines count the acts of each kind
	// made, to vary them in turn.
	rotations, revocations, quarantines, subdelegations int
}

type diffGrant struct {
	key    byte
	rec    *schemas.Delegation
	digest string
}

func newDiffWorld(t testing.TB, seed uint64) *diffWorld {
	w := &diffWorld{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), now: testkit.Epoch,
		keys: map[byte]*sign.PrivateKey{}, byRaw: map[string]byte{}, quar: map[string]int64{}, revoked: map[string]bool{}}
	for _, n := range slices.Concat(diffRootKeys, diffDelegateKeys, []byte{diffStranger}) {
		k := testkit.Key(t, n)
		w.keys[n], w.byRaw[string(k.Public().Raw())] = k, n
	}
	return w
}

func (w *diffWorld) clock() time.Time { return w.now }

// advance moves the clock on by 1 to 20 minutes.
func (w *diffWorld) advance() { w.now = w.now.Add(time.Duration(1+w.rng.IntN(20)) * time.Minute) }

// issued is an issued_at a signer writes: up to 10 minutes ago.
func (w *diffWorld) issued() int64 {
	return w.now.Add(-time.Duration(w.rng.IntN(10)) * time.Minute).Unix()
}

func (w *diffWorld) pick(ns []byte) byte { return ns[w.rng.IntN(len(ns))] }

func (w *diffWorld) seal(rec schemas.Record, signers ...byte) []byte {
	slices.Sort(signers)
	signers = slices.Compact(signers)
	var ks []*sign.PrivateKey
	for _, n := range signers {
		ks = append(ks, w.keys[n])
	}
	return testkit.Seal(w.t, rec, ks...)
}

// rootKeyNums are the key numbers of a root record's keys.
func (w *diffWorld) rootKeyNums(r *schemas.Root) []byte {
	var out []byte
	for _, raw := range r.Keys {
		out = append(out, w.byRaw[string(raw)])
	}
	return out
}

// rootSigners are the first threshold keys of the root in force.
func (w *diffWorld) rootSigners() []byte {
	return w.rootKeyNums(w.root)[:w.root.Threshold]
}

// grantKey is the delegate of a random accepted delegation granting one
// of acts (any when none are given), or a random delegate key when there
// is none (and one time in five).
func (w *diffWorld) grantKey(acts ...schemas.Action) byte {
	var keys []byte
	for _, g := range w.live() {
		if len(acts) == 0 || slices.ContainsFunc(acts, func(a schemas.Action) bool { return slices.Contains(g.rec.Actions, a) }) {
			keys = append(keys, g.key)
		}
	}
	if len(keys) == 0 || w.rng.IntN(5) == 0 {
		return w.pick(diffDelegateKeys)
	}
	return w.pick(keys)
}

// live are the accepted delegations in their window a while longer and
// not revoked, themselves or their delegate's key, as far as the model
// knows (a revoked parent is not tracked: some acts of their delegates
// are refused).
func (w *diffWorld) live() []diffGrant {
	var out []diffGrant
	for _, g := range w.grants {
		if g.rec.NotAfter > w.now.Add(30*time.Minute).Unix() && !w.revoked[g.digest] && !w.revoked[w.keys[g.key].Public().ID()] {
			out = append(out, g)
		}
	}
	return out
}

// nextBatch returns the records of step's append call: one record, or
// (one step in five) two, appended all or none.
func (w *diffWorld) nextBatch(step int) ([][]byte, string) {
	e, label := w.next(step)
	if step == 0 || w.rng.IntN(5) > 0 {
		return [][]byte{e}, label
	}
	e2, _ := w.next(step)
	return [][]byte{e, e2}, "batch"
}

// next returns the record of step and a label saying what it is meant to
// be.
func (w *diffWorld) next(step int) ([]byte, string) {
	if step == 0 {
		k1, k2 := w.keys[1], w.keys[2]
		r := testkit.Root(2, k1, k2)
		r.IssuedAt = w.now.Add(-time.Hour).Unix()
		return testkit.Seal(w.t, r, k1, k2), "root"
	}
	switch n := w.rng.IntN(100); {
	case n < 20:
		return w.instruction()
	case n < 38:
		return w.delegation()
	case n < 50:
		return w.revocation()
	case n < 60:
		return w.pin()
	case n < 70:
		return w.quarantine()
	case n < 80:
		return w.rotation()
	case n < 84:
		return w.downgrade()
	case n < 88:
		return w.issuer()
	case n < 94:
		if len(w.entries) > 0 {
			return bytes.Clone(w.entries[w.rng.IntN(len(w.entries))]), "duplicate"
		}
		return w.instruction()
	case n < 96:
		junk := make([]byte, 40)
		for i := range junk {
			junk[i] = byte(w.rng.IntN(256))
		}
		return junk, "malformed"
	default:
		in := testkit.Instruction(fmt.Sprintf("%032x", w.rng.Uint64()))
		in.IssuedAt = w.now.Add(-25 * time.Hour).Unix()
		in.NotBefore, in.Expires = in.IssuedAt, w.now.Add(time.Hour).Unix()
		return w.seal(in, w.grantKey()), "stale"
	}
}

func (w *diffWorld) instruction() ([]byte, string) {
	in := testkit.Instruction(fmt.Sprintf("%032x", w.rng.Uint64()))
	in.Machine = fmt.Sprintf("runner-%d", 1+w.rng.IntN(2))
	in.IssuedAt = w.issued()
	in.NotBefore, in.Expires = in.IssuedAt, in.IssuedAt+3600
	if w.rng.IntN(10) == 0 {
		return w.seal(in, w.pick(w.rootKeyNums(w.root))), "instruction-by-root-key" // a root key holds no delegation
	}
	return w.seal(in, w.grantKey(schemas.ActionInstruct)), "instruction"
}

// delegation is a root delegation, or a re-delegation by a delegate that
// may delegate; some are wider than they may be, or signed by the wrong
// keys.
func (w *diffWorld) delegation() ([]byte, string) {
	var parents []diffGrant
	for _, g := range w.live() {
		if g.rec.Depth > 0 && slices.Contains(g.rec.Actions, schemas.ActionDelegate) {
			parents = append(parents, g)
		}
	}
	if len(parents) > 0 && w.rng.IntN(5) < 2 {
		p := parents[w.rng.IntN(len(parents))]
		var acts []schemas.Action
		for _, a := range p.rec.Actions {
			if w.rng.IntN(3) > 0 {
				acts = append(acts, a)
			}
		}
		if len(acts) == 0 {
			acts = []schemas.Action{p.rec.Actions[0]}
		}
		d := w.delegationOf(w.pick(diffDelegateKeys), acts, p.rec.Depth-1, "runner-1")
		d.NotBefore, d.NotAfter = p.rec.NotBefore, min(p.rec.NotAfter, d.NotAfter)
		w.subdelegations++
		switch w.subdelegations % 4 { // in turn
		case 1:
			d.Depth = p.rec.Depth // not below the parent's
		case 3:
			d.Actions = []schemas.Action{schemas.ActionIssuer} // an action no root delegation grants
			d.Streams, d.Machines, d.Artifacts = nil, nil, nil
		}
		return w.seal(d, p.key), "subdelegation"
	}
	acts := []schemas.Action{}
	for _, a := range []schemas.Action{schemas.ActionDelegate, schemas.ActionInstruct, schemas.ActionPin, schemas.ActionQuarantine, schemas.ActionRevoke} {
		if w.rng.IntN(2) == 0 {
			acts = append(acts, a)
		}
	}
	if len(acts) == 0 {
		acts = []schemas.Action{schemas.ActionInstruct}
	}
	d := w.delegationOf(w.pick(diffDelegateKeys), acts, uint64(w.rng.IntN(3)), "runner-*")
	switch n := w.rng.IntN(10); {
	case n == 0:
		return w.seal(d, diffStranger), "delegation"
	case n == 1:
		return w.seal(d, w.rootKeyNums(w.root)[0]), "delegation"
	case n == 2 && len(w.retired) > 0:
		return w.seal(d, w.pick(w.retired)), "delegation"
	}
	return w.seal(d, w.rootSigners()...), "delegation"
}

func (w *diffWorld) delegationOf(to byte, acts []schemas.Action, depth uint64, machines string) *schemas.Delegation {
	d := &schemas.Delegation{V: 1, Key: w.keys[to].Public().Raw(), Actions: acts, Depth: depth, IssuedAt: w.issued(),
		NotBefore: w.now.Add(-time.Hour).Unix(), NotAfter: w.now.Add(time.Duration(20+w.rng.IntN(480)) * time.Minute).Unix()}
	if slices.Contains(acts, schemas.ActionInstruct) {
		d.Streams = []string{"demo"}
	}
	if slices.Contains(acts, schemas.ActionInstruct) || slices.Contains(acts, schemas.ActionQuarantine) {
		d.Machines = []string{machines}
	}
	if slices.Contains(acts, schemas.ActionPin) {
		d.Artifacts = []string{"agent"}
	}
	return d
}

// revocation revokes a delegate's key, a delegation or a pin (by the root
// threshold or by a delegate), a root key (never allowed), a retired
// root key, or nothing the ledger holds.
func (w *diffWorld) revocation() ([]byte, string) {
	r := &schemas.Revocation{V: 1, Reason: "test", IssuedAt: w.issued()}
	label := "revoke-record"
	w.revocations++
	switch n := w.revocations % 6; { // each target in turn
	case n == 0 && len(w.grants) > 0:
		r.Target, label = w.keys[w.grantKey()].Public().ID(), "revoke-key"
	case n == 1 && len(w.grants) > 0:
		r.Target = w.grants[w.rng.IntN(len(w.grants))].digest
	case n == 2 && len(w.pins) > 0:
		r.Target = w.pins[w.rng.IntN(len(w.pins))]
	case n == 3:
		r.Target, label = w.keys[w.pick(w.rootKeyNums(w.root))].Public().ID(), "revoke-rootkey"
	case n == 4 && len(w.retired) > 0:
		r.Target, label = w.keys[w.pick(w.retired)].Public().ID(), "revoke-retired"
	default:
		r.Target, label = fmt.Sprintf("sha256:%064x", w.rng.Uint64()), "revoke-unknown"
	}
	if w.rng.IntN(4) == 0 {
		return w.seal(r, w.grantKey(schemas.ActionRevoke)), label + "-by-delegate"
	}
	return w.seal(r, w.rootSigners()...), label
}

func (w *diffWorld) pin() ([]byte, string) {
	p := testkit.Pin([]string{"linux/amd64", "linux/arm64"}[w.rng.IntN(2)], fmt.Sprintf("sha256:%064x", 1+w.rng.IntN(4)), 1000)
	p.Version = fmt.Sprintf("v1.%d.0", w.rng.IntN(4))
	p.IssuedAt, p.Expires = w.issued(), w.now.Add(30*24*time.Hour).Unix()
	signer := w.grantKey(schemas.ActionPin)
	if w.rng.IntN(10) == 0 {
		signer = diffStranger
	}
	return w.seal(p, signer), "pin"
}

// quarantine is a quarantine or a lift, by the root threshold or a
// delegate; some are dated before the act in force was accepted.
func (w *diffWorld) quarantine() ([]byte, string) {
	w.quarantines++
	for _, m := range []string{"runner-1", "runner-2"} {
		if at, ok := w.quar[m]; ok && w.quarantines%2 == 0 && w.root.IssuedAt < at {
			// Dated before the act in force was accepted (and after the
			// root was issued): superseded.
			q := &schemas.Quarantine{V: 1, Machine: m, IssuedAt: at - 1}
			return w.seal(q, w.rootSigners()...), "quarantine-stale"
		}
	}
	m := fmt.Sprintf("runner-%d", 1+w.rng.IntN(2))
	q := &schemas.Quarantine{V: 1, Machine: m, IssuedAt: w.issued()}
	label := "quarantine"
	if w.rng.IntN(3) == 0 {
		q.Lift, label = true, "lift"
	} else if w.rng.IntN(2) == 0 {
		q.Until = w.now.Add(time.Duration(10+w.rng.IntN(180)) * time.Minute).Unix()
	}
	if w.rng.IntN(2) == 0 {
		return w.seal(q, w.grantKey(schemas.ActionQuarantine)), label + "-by-delegate"
	}
	return w.seal(q, w.rootSigners()...), label
}

// rotation is root version v+1 over 2 or 3 of the root keys, signed by
// the old threshold and the new; some skip a version, have expired, or
// lack the old threshold.
func (w *diffWorld) rotation() ([]byte, string) {
	nums := slices.Clone(diffRootKeys)
	w.rng.Shuffle(len(nums), func(i, j int) { nums[i], nums[j] = nums[j], nums[i] })
	nums = nums[:2+w.rng.IntN(2)]
	var raw [][]byte
	for _, n := range nums {
		raw = append(raw, w.keys[n].Public().Raw())
	}
	slices.SortFunc(raw, bytes.Compare)
	r := &schemas.Root{V: 1, Version: w.root.Version + 1, Keys: raw, Threshold: uint64(1 + w.rng.IntN(len(raw))),
		IssuedAt: w.issued(), Expires: w.now.Add(365 * 24 * time.Hour).Unix()}
	signers := append(slices.Clone(w.rootKeyNums(r)[:r.Threshold]), w.rootSigners()...)
	w.rotations++
	switch w.rotations % 6 { // every sixth of each: a spread no seed misses
	case 1:
		r.Version++
	case 3:
		r.Expires = w.now.Add(-time.Second).Unix()
		r.IssuedAt = r.Expires - 60
	case 5:
		signers = w.rootKeyNums(r)[:r.Threshold]
	}
	return w.seal(r, signers...), "rotation"
}

func (w *diffWorld) downgrade() ([]byte, string) {
	d := &schemas.Downgrade{V: 1, Artifact: "agent", Version: fmt.Sprintf("v1.%d.0", w.rng.IntN(4)), Reason: "test",
		IssuedAt: w.issued(), Expires: w.now.Add(time.Duration(10+w.rng.IntN(240)) * time.Minute).Unix()}
	return w.seal(d, w.rootSigners()...), "downgrade"
}

func (w *diffWorld) issuer() ([]byte, string) {
	url := fmt.Sprintf("https://issuer%d.example.com", w.rng.IntN(2))
	r := &schemas.Issuer{V: 1, Issuer: url, JWKSURI: url + "/jwks", Audiences: []string{"writ"}, IssuedAt: w.issued()}
	if w.rng.IntN(5) == 0 {
		return w.seal(r, w.grantKey()), "issuer-by-delegate"
	}
	return w.seal(r, w.rootSigners()...), "issuer"
}

// accept updates the model with a record the reference accepted.
func (w *diffWorld) accept(entry []byte, a *delegation.Applied) {
	w.entries = append(w.entries, entry)
	w.digests = append(w.digests, a.Digest)
	switch r := a.Record.(type) {
	case *schemas.Root:
		if w.root != nil {
			for _, n := range w.rootKeyNums(w.root) {
				if !slices.Contains(w.rootKeyNums(r), n) && !slices.Contains(w.retired, n) {
					w.retired = append(w.retired, n)
				}
			}
		}
		w.root = r
	case *schemas.Delegation:
		w.grants = append(w.grants, diffGrant{key: w.byRaw[string(r.Key)], rec: r, digest: a.Digest})
	case *schemas.Pin:
		w.pins = append(w.pins, a.Digest)
	case *schemas.Quarantine:
		w.quar[r.Machine] = a.Accepted.Unix()
	case *schemas.Revocation:
		w.revoked[r.Target] = true
	}
}

// universe is what the states are asked about: every key of the pool,
// every record accepted and one that never was, at instants around now.
func (w *diffWorld) universe() statequery.Universe {
	u := statequery.Universe{
		Targets:   append(slices.Clone(w.digests), fmt.Sprintf("sha256:%064x", 0)),
		Platforms: []string{"linux/amd64", "linux/arm64"},
		Versions:  []string{"v1.0.0", "v1.1.0", "v1.2.0", "v1.3.0"},
		Machines:  []string{"runner-1", "runner-2"},
		Issuers:   []string{"https://issuer0.example.com", "https://issuer1.example.com"},
		At:        []time.Time{w.now, w.now.Add(3 * time.Hour), w.now.Add(30 * time.Hour)},
	}
	for _, n := range slices.Concat(diffRootKeys, diffDelegateKeys, []byte{diffStranger}) {
		u.Keys = append(u.Keys, w.keys[n].Public())
	}
	return u
}
