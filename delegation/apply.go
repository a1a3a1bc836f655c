package delegation

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/writ-ledger/writ/provenance"
	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// Rule ids for records refused by Apply, besides the Denial rules: the
// ids of package rules, which also holds each one's next act.
const (
	RuleMalformed       = rules.Malformed       // not a canonical envelope or record
	RuleBadSignature    = rules.BadSignature    // a signature by a known key does not verify
	RuleUnknownKey      = rules.UnknownKey      // signed by a key no record introduced
	RuleThreshold       = rules.Threshold       // fewer distinct root keys than the threshold
	RuleWrongKind       = rules.WrongKind       // a kind that may not stand at this position
	RuleNotAttenuated   = rules.NotAttenuated   // a re-delegation wider than the delegation behind it
	RuleRootVersion     = rules.RootVersion     // a rotated root that is not exactly version v+1
	RuleUnknownTarget   = rules.UnknownTarget   // a revocation of nothing this ledger holds
	RuleNotSupportedYet = rules.NotSupportedYet // a valid act this version cannot apply yet
	RuleDuplicate       = rules.Duplicate       // the same signed content is already in the log
	RuleRootKey         = rules.RootKey         // a revocation of a key of the root in force: rotate the root instead
	RuleSuperseded      = rules.Superseded      // a quarantine act issued before the machine's act in force
)

func refuse(index int64, rule string, err error) error {
	return &RecordError{Index: index, Rule: rule, Err: err}
}

func refusef(index int64, rule, format string, args ...any) error {
	return refuse(index, rule, fmt.Errorf(format, args...))
}

// Prepared is an entry parsed, pre-verified and decoded ahead of Apply,
// on any goroutine: the expensive, order-independent work. Apply then
// only decides trust and authority, in order.
type Prepared struct {
	Entry []byte
	env   *sign.Envelope
	rec   schemas.Record
	err   error // parse or decode failure, reported by Apply
}

// Record returns the decoded record, or nil if it did not decode.
func (p *Prepared) Record() schemas.Record { return p.rec }

// Prepare parses entry as a signed record, verifies each signature whose
// key id the directory knows (remembering the result, see
// sign.Envelope.Precheck), and decodes the payload. It never fails: a
// problem is kept and reported by Apply. dir may be nil.
func Prepare(entry []byte, dir sign.KeyLookup) *Prepared {
	p := &Prepared{Entry: entry}
	env, err := sign.ParseEnvelope(entry)
	if err != nil {
		p.err = err
		return p
	}
	p.env = env
	if dir != nil {
		env.Precheck(dir)
	}
	if p.rec, err = schemas.Decode(env.Kind, env.Payload); err != nil {
		p.err = err
	}
	return p
}

// Apply checks entry as the record at position s.Size() of the authority
// log, accepted by the ledger at accepted (the signed time of the
// checkpoint of the batch that adds it; see the package doc, "Time"), and,
// if every check passes, adds it to the state. On refusal it returns a
// *RecordError (wrapping ErrRefused) with the rule id, and the state is
// unchanged.
func (s *State) Apply(entry []byte, accepted time.Time) (*Applied, error) {
	return s.ApplyPrepared(Prepare(entry, nil), accepted)
}

// ApplyPrepared is Apply for an entry already Prepared. Signatures
// pre-verified under the key the state knows for their key id are not
// verified again; every other check runs here, in order.
func (s *State) ApplyPrepared(p *Prepared, accepted time.Time) (*Applied, error) {
	index := s.size
	if p.env == nil {
		return nil, refuse(index, RuleMalformed, p.err)
	}
	// Duplicates are judged by content (the signed payload, which also
	// determines the kind: every kind has its own required fields), not by
	// envelope bytes, so re-signing or dropping one of several signatures
	// does not make the same act new.
	content := sha256.Sum256(p.env.Payload)
	prev, dup, err := s.lookupSeen(content)
	if err != nil {
		return nil, err
	}
	if dup && prev < index {
		// An entry of a persisted state is found at its own index.
		return nil, refusef(index, RuleDuplicate, "this %s record's content is already entry %d", p.env.Kind, prev)
	}
	s.undo = nil
	a, err := s.applyEntry(index, p, accepted)
	if err != nil {
		for i := len(s.undo) - 1; i >= 0; i-- {
			s.undo[i]()
		}
		s.undo = nil
		return nil, err
	}
	a.Content = content
	s.addSeen(content, index)
	s.size++
	if s.journal != nil {
		s.journal = append(s.journal, s.undo)
	}
	s.undo = nil
	return a, nil
}

func (s *State) applyEntry(index int64, p *Prepared, accepted time.Time) (*Applied, error) {
	env := p.env
	if index == 0 && env.Kind != schemas.KindRoot {
		return nil, refusef(0, RuleWrongKind, "entry 0 must be a root record, is %s", env.Kind)
	}
	if env.Kind == schemas.KindRoot {
		return s.applyRoot(index, env, p, accepted)
	}
	verified, err := env.Verify(s.Key)
	if err != nil {
		return nil, refuse(index, RuleBadSignature, err)
	}
	if len(verified.Unknown) > 0 {
		// Every signature in the authority log is by a key the ledger
		// knows; an entry padded with strangers' signatures is refused.
		return nil, refusef(index, RuleUnknownKey, "%s record signed by key ids this ledger does not know: %v", env.Kind, verified.Unknown)
	}
	if p.rec == nil {
		return nil, refuse(index, RuleMalformed, p.err)
	}
	if (env.Kind == schemas.KindPin || env.Kind == schemas.KindInstruction) && len(env.Signatures) != 1 {
		return nil, refusef(index, RuleMalformed, "a %s record carries exactly one signature, this one carries %d", env.Kind, len(env.Signatures))
	}
	if IssuedAt(p.rec) == 0 {
		return nil, refusef(index, RuleWrongKind, "a %s record does not belong in the authority log", env.Kind)
	}
	a := &Applied{Index: index, Kind: env.Kind, Digest: env.Digest(), Record: p.rec, Signers: verified.Keys, Accepted: accepted}
	at, err := checkIssuedAt(index, env.Kind, IssuedAt(p.rec), accepted)
	if err != nil {
		return nil, err
	}
	switch r := p.rec.(type) {
	case *schemas.Delegation:
		err = s.applyDelegation(a, r, at)
	case *schemas.Pin:
		err = s.applyPin(a, r, at)
		if err == nil {
			pin := &PinEntry{Index: index, Digest: a.Digest, Record: r, Signer: a.Signers[0].ID()}
			appendTo(s, &s.pins, pin)
			setMap(s, s.byDigest, a.Digest, any(pin))
		}
	case *schemas.Instruction:
		err = s.applySigned(a, Request{Action: schemas.ActionInstruct, Stream: r.Stream, Machine: r.Machine}, at)
	case *schemas.Revocation:
		err = s.applyRevocation(a, r, at)
	case *schemas.Issuer:
		err = s.applyIssuer(a, r, at)
	case *schemas.Quarantine:
		err = s.applyQuarantine(a, r, at)
	case *schemas.Downgrade:
		err = s.applyDowngrade(a, r, at)
	default:
		err = refusef(index, RuleWrongKind, "a %s record does not belong in the authority log", env.Kind)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// rootKeys checks a root record's keys.
func rootKeys(index int64, r *schemas.Root) (map[string]sign.PublicKey, []sign.PublicKey, error) {
	keys := map[string]sign.PublicKey{}
	var list []sign.PublicKey
	for i, raw := range r.Keys {
		k, err := sign.NewPublicKey(raw)
		if err != nil {
			return nil, nil, refuse(index, RuleMalformed, fmt.Errorf("root.keys[%d]: %w", i, err))
		}
		keys[k.ID()] = k
		list = append(list, k)
	}
	return keys, list, nil
}

// applyRoot accepts the first root (self-signed by its own threshold) or
// a rotation: exactly version v+1, signed by at least root v's threshold
// of root v's keys AND its own threshold of its own keys, while root v is
// unexpired (at its issued_at and when accepted), and by no other key. A
// root that has expired when the ledger accepts it trusts nothing and is
// refused.
func (s *State) applyRoot(index int64, env *sign.Envelope, p *Prepared, accepted time.Time) (*Applied, error) {
	if p.rec == nil {
		return nil, refuse(index, RuleMalformed, p.err)
	}
	r := p.rec.(*schemas.Root)
	keys, list, err := rootKeys(index, r)
	if err != nil {
		return nil, err
	}
	prev := s.Root()
	lookup := func(id string) (sign.PublicKey, bool) {
		if k, ok := keys[id]; ok {
			return k, true
		}
		if prev != nil {
			for _, k := range prev.Keys {
				if k.ID() == id {
					return k, true
				}
			}
		}
		return sign.PublicKey{}, false
	}
	verified, err := env.Verify(lookup)
	if err != nil {
		return nil, refuse(index, RuleBadSignature, err)
	}
	if len(verified.Unknown) > 0 {
		return nil, refusef(index, RuleThreshold, "root signed by key ids that are neither its keys nor the current root's: %v", verified.Unknown)
	}
	if n := countAmong(verified.Keys, list); n < r.Threshold {
		return nil, refusef(index, RuleThreshold, "root version %d signed by %d of its own keys, threshold %d", r.Version, n, r.Threshold)
	}
	at, err := checkIssuedAt(index, schemas.KindRoot, r.IssuedAt, accepted)
	if err != nil {
		return nil, err
	}
	if accepted.Unix() >= r.Expires {
		return nil, refusef(index, RuleRootExpired, "root version %d expires at %s, before the ledger accepted it (%s)", r.Version, unixUTC(r.Expires), accepted.UTC().Format(time.RFC3339))
	}
	if prev != nil {
		switch {
		case r.Version != prev.Record.Version+1:
			return nil, refusef(index, RuleRootVersion, "root version %d cannot follow version %d (only %d can)", r.Version, prev.Record.Version, prev.Record.Version+1)
		case r.IssuedAt >= prev.Record.Expires || accepted.Unix() >= prev.Record.Expires:
			return nil, refusef(index, RuleRootExpired, "root version %d expired at %s, before this rotation (%s)", prev.Record.Version, unixUTC(prev.Record.Expires), at)
		case r.IssuedAt < prev.Record.IssuedAt:
			return nil, refusef(index, RuleOutsideWindow, "root version %d is dated %s, before root version %d, whose keys sign the rotation, was issued (%s)",
				r.Version, unixUTC(r.IssuedAt), prev.Record.Version, unixUTC(prev.Record.IssuedAt))
		}
		if n := countAmong(verified.Keys, prev.Keys); n < prev.Record.Threshold {
			return nil, refusef(index, RuleThreshold, "rotation signed by %d keys of root version %d, threshold %d", n, prev.Record.Version, prev.Record.Threshold)
		}
	}
	for _, k := range list {
		if i, gone := s.revoked[k.ID()]; gone {
			return nil, refusef(index, RuleRevoked, "root version %d lists key %s, revoked at ledger index %d: a revoked key never counts toward a threshold", r.Version, k.ID(), i)
		}
	}
	e := &RootEntry{Index: index, Digest: env.Digest(), Record: r, Keys: list}
	appendTo(s, &s.roots, e)
	for _, k := range list {
		s.trust(k)
	}
	return &Applied{Index: index, Kind: schemas.KindRoot, Digest: env.Digest(), Record: r, Signers: verified.Keys, Accepted: accepted}, nil
}

// countAmong returns how many distinct keys of set are among keys.
func countAmong(keys, set []sign.PublicKey) uint64 {
	var n uint64
	for _, k := range set {
		for _, v := range keys {
			if v.Equal(k) {
				n++
				break
			}
		}
	}
	return n
}

// rootSigned reports whether the distinct signers include the current
// root's threshold of its unrevoked keys, and which of them they are.
// Only distinct public keys of the root in force count: a key listed
// twice, a signature entry repeated, a key of an earlier root and a
// revoked key count for nothing.
func (s *State) rootSigned(signers []sign.PublicKey) (bool, uint64, []string) {
	root := s.Root()
	var ids []string
	for _, k := range root.Keys {
		if _, gone := s.revoked[k.ID()]; gone {
			continue
		}
		for _, v := range signers {
			if v.Equal(k) {
				ids = append(ids, k.ID())
				break
			}
		}
	}
	return uint64(len(ids)) >= root.Record.Threshold, uint64(len(ids)), ids
}

// rootAct decides an act the root threshold may sign (a delegation, a
// revocation, an issuer or downgrade record, a quarantine): ok when the
// current root's threshold signed it; a RuleThreshold refusal when root
// keys signed it without reaching the threshold, naming the rotation when
// they are keys of a root that a later one replaced; neither when no root
// key, current or past, signed it (a delegate's act, for the caller to
// judge). delegable says the act may also be a delegate's: one signer who
// holds a delegation is then judged as that delegate, even when its key is
// (or was) a root key too.
func (s *State) rootAct(a *Applied, at instants, delegable bool) (ok bool, ids []string, err error) {
	ok, n, ids := s.rootSigned(a.Signers)
	if ok {
		if err := s.rootInForce(a, at); err != nil {
			return false, nil, err
		}
		return true, ids, nil
	}
	if delegable && len(a.Signers) == 1 && s.holdsGrant(a.Signers[0]) {
		return false, nil, nil // one key that is also a delegate: judged as the delegate's act
	}
	root := s.Root()
	if retired := s.retiredRootSigners(a.Signers); len(retired) > 0 {
		return false, nil, refusef(a.Index, RuleThreshold,
			"%s record signed by %d key(s) of an earlier root (%s), which root version %d (ledger index %d) replaced: only the current root's keys count, %d of them signed, threshold %d",
			a.Kind, len(retired), strings.Join(retired, ", "), root.Record.Version, root.Index, n, root.Record.Threshold)
	}
	if n > 0 {
		return false, nil, refusef(a.Index, RuleThreshold, "%s record signed by %d distinct unrevoked keys of root version %d, threshold %d",
			a.Kind, n, root.Record.Version, root.Record.Threshold)
	}
	return false, nil, nil
}

// holdsGrant reports whether key holds any delegation in the state.
func (s *State) holdsGrant(key sign.PublicKey) bool {
	return slices.ContainsFunc(s.grants, func(g *Grant) bool { return g.Key.Equal(key) })
}

// retiredRootSigners returns "key ID (root version V)" for each signer
// that was a key of an earlier root and is not one of the current root's.
func (s *State) retiredRootSigners(signers []sign.PublicKey) []string {
	cur := s.Root()
	var out []string
	for _, v := range signers {
		if slices.ContainsFunc(cur.Keys, v.Equal) {
			continue
		}
		for i := len(s.roots) - 2; i >= 0; i-- {
			if slices.ContainsFunc(s.roots[i].Keys, v.Equal) {
				out = append(out, fmt.Sprintf("%s of root version %d", v.ID(), s.roots[i].Record.Version))
				break
			}
		}
	}
	return out
}

// applySigned checks that the record has exactly one signer and that the
// signer is authorized for req at both instants.
// applyPin checks a pin's provenance again, when it carries one
// (provenance.CheckPin: its rule), then its signer's authority with the
// builder it attests: a delegation that demands provenance from builders
// and would cover the pin but for its builder refuses it under
// rules.ProvenanceBuilder.
func (s *State) applyPin(a *Applied, r *schemas.Pin, at instants) error {
	var pe *provenance.Error
	if err := provenance.CheckPin(r); errors.As(err, &pe) {
		return refuse(a.Index, pe.Rule, err)
	} else if err != nil {
		return refuse(a.Index, RuleMalformed, err)
	}
	req := Request{Action: schemas.ActionPin, Artifact: r.Artifact, Builder: r.Builder()}
	err := s.applySigned(a, req, at)
	if denialOf(err).Rule != RuleOutOfScope || len(a.Signers) != 1 {
		return err
	}
	req.Key, req.anyBuilder = a.Signers[0], true
	if _, aerr := s.authorizeAt(req, at); aerr != nil {
		return err
	}
	return refusef(a.Index, rules.ProvenanceBuilder, "the delegation of key %s for artifact %q demands provenance from its builders (an id and the key that signs for it); the pin's: %s", a.Signers[0].ID(), r.Artifact, r.Builder())
}

func (s *State) applySigned(a *Applied, req Request, at instants) error {
	if len(a.Signers) != 1 {
		return refusef(a.Index, RuleMalformed, "a %s record has exactly one signer, has %d", a.Kind, len(a.Signers))
	}
	req.Key = a.Signers[0]
	if _, err := s.authorizeAt(req, at); err != nil {
		return refuse(a.Index, denialOf(err).Rule, err)
	}
	return nil
}
