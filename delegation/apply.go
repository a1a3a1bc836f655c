package delegation

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

func refuse(index int64, rule string, err error) error {
	return &RecordError{Index: index, Rule: rule, Err: err}
}

// Prepared is an entry parsed, pre-verified and decoded ahead of Apply,
// on any goroutine: the expensive, order-independent work. Apply then
// only decides trust and authority, in order.
type Prepared struct {
	Entry []byte
	env   *sign.Envelope
	rec   schemas.Record
	err   error // parse or decode failure, reported by Apply
	rule  string
}

// Record returns the decoded record, or nil if it did not decode.
func (p *Prepared) Record() schemas.Record { return p.rec }

// Prepare parses entry as a signed record, verifies each signature whose
// key id the directory knows (remembering the result, see
// sign.Envelope.Precheck), and decodes the payload. It never fails: a
// problem is kept and reported by Apply with its rule. dir may be nil.
func Prepare(entry []byte, dir sign.KeyLookup) *Prepared {
	p := &Prepared{Entry: entry}
	env, err := sign.ParseEnvelope(entry)
	if err != nil {
		p.err, p.rule = err, RuleMalformed
		return p
	}
	p.env = env
	if dir != nil {
		env.Precheck(dir)
	}
	rec, err := schemas.Decode(env.Kind, env.Payload)
	if err != nil {
		p.err, p.rule = err, RuleMalformed
		return p
	}
	p.rec = rec
	return p
}

// Apply checks entry as the record at position s.Size() of the authority
// log and, if every check passes, adds it to the state. On refusal it
// returns a *RecordError (wrapping ErrRefused) with the rule id, and the
// state is unchanged.
func (s *State) Apply(entry []byte) (*Applied, error) {
	return s.ApplyPrepared(Prepare(entry, nil))
}

// ApplyPrepared is Apply for an entry already Prepared. Signatures
// pre-verified under the key the state trusts for their key id are not
// verified again; every other check runs here, in order.
func (s *State) ApplyPrepared(p *Prepared) (*Applied, error) {
	index := s.size
	if p.env == nil {
		return nil, refuse(index, p.rule, p.err)
	}
	env := p.env
	// Duplicates are judged by content (the signed payload, which also
	// determines the kind: every kind has its own required fields), not by
	// envelope bytes, so re-signing or dropping one of several signatures
	// does not make the same act new.
	content := sha256.Sum256(env.Payload)
	if prev, dup := s.seen[content]; dup {
		return nil, refuse(index, RuleDuplicate, fmt.Errorf("this %s record's content is already entry %d", env.Kind, prev))
	}
	c := change{content: content, grants: len(s.grants), pins: len(s.pins)}
	var a *Applied
	var err error
	if index == 0 {
		a, err = s.applyRoot(env, &c)
	} else {
		a, err = s.applyEntry(index, p, &c)
	}
	if err != nil {
		for _, id := range c.newKeys {
			delete(s.keys, id)
		}
		s.root, s.grants, s.pins = rootIf(s.root, c.root), s.grants[:c.grants], s.pins[:c.pins]
		return nil, err
	}
	s.seen[content] = index
	s.size++
	if s.journal != nil {
		s.journal = append(s.journal, c)
	}
	return a, nil
}

// rootIf drops the root again if this entry set it.
func rootIf(r *RootEntry, setHere bool) *RootEntry {
	if setHere {
		return nil
	}
	return r
}

func (s *State) applyEntry(index int64, p *Prepared, c *change) (*Applied, error) {
	env := p.env
	verified, err := env.Verify(s.Key)
	if err != nil {
		return nil, refuse(index, RuleBadSignature, err)
	}
	if len(verified.Unknown) > 0 {
		// Every signature in the authority log is by a key the ledger
		// trusts; an entry padded with strangers' signatures is refused.
		return nil, refuse(index, RuleUnknownKey, fmt.Errorf("%s record signed by key ids this ledger does not trust: %v", env.Kind, verified.Unknown))
	}
	if p.rec == nil {
		return nil, refuse(index, p.rule, p.err)
	}
	if (env.Kind == schemas.KindPin || env.Kind == schemas.KindInstruction) && len(env.Signatures) != 1 {
		return nil, refuse(index, RuleMalformed, fmt.Errorf("a %s record carries exactly one signature, this one carries %d", env.Kind, len(env.Signatures)))
	}
	a := &Applied{Index: index, Kind: env.Kind, Digest: env.Digest(), Record: p.rec, Signers: verified.Keys}
	switch r := p.rec.(type) {
	case *schemas.Delegation:
		err = s.applyDelegation(a, r, c)
	case *schemas.Pin:
		err = s.applySigned(a, Request{Action: "pin", Artifact: r.Artifact, At: time.Unix(r.IssuedAt, 0)}, func() {
			s.pins = append(s.pins, &PinEntry{Index: index, Digest: a.Digest, Record: r, Signer: a.Signers[0].ID()})
		})
	case *schemas.Instruction:
		err = s.applySigned(a, Request{Action: "instruct", Stream: r.Stream, Machine: r.Machine, At: time.Unix(r.IssuedAt, 0)}, nil)
	case *schemas.Root:
		err = refuse(index, RuleNotSupportedYet, errors.New("root rotation is not supported yet: a ledger has one root, at index 0"))
	case *schemas.Revocation, *schemas.Issuer, *schemas.Quarantine:
		// Refused, never stored and ignored: a revocation the state did not
		// enforce would be worse than none.
		err = refuse(index, RuleNotSupportedYet, fmt.Errorf("%s records are not applied by this version yet", env.Kind))
	default:
		err = refuse(index, RuleWrongKind, fmt.Errorf("a %s record does not belong in the authority log", env.Kind))
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

func (s *State) applyRoot(env *sign.Envelope, c *change) (*Applied, error) {
	if env.Kind != schemas.KindRoot {
		return nil, refuse(0, RuleWrongKind, fmt.Errorf("entry 0 must be a root record, is %s", env.Kind))
	}
	// A root is self-signed: its keys come from its own payload, which is
	// decoded strictly (bounded, canonical) before any signature is
	// checked. Pin the root by digest (--trust-root) to trust it at all.
	rec, err := schemas.Decode(schemas.KindRoot, env.Payload)
	if err != nil {
		return nil, refuse(0, RuleMalformed, err)
	}
	r := rec.(*schemas.Root)
	keys := map[string]sign.PublicKey{}
	var list []sign.PublicKey
	for i, raw := range r.Keys {
		k, err := sign.NewPublicKey(raw)
		if err != nil {
			return nil, refuse(0, RuleMalformed, fmt.Errorf("root.keys[%d]: %w", i, err))
		}
		keys[k.ID()] = k
		list = append(list, k)
	}
	verified, err := env.Verify(func(id string) (sign.PublicKey, bool) { k, ok := keys[id]; return k, ok })
	if err != nil {
		return nil, refuse(0, RuleBadSignature, err)
	}
	if len(verified.Unknown) > 0 {
		return nil, refuse(0, RuleThreshold, fmt.Errorf("root signed by key ids it does not list: %v", verified.Unknown))
	}
	if uint64(len(verified.Keys)) < r.Threshold {
		return nil, refuse(0, RuleThreshold, fmt.Errorf("root signed by %d of its keys, threshold %d", len(verified.Keys), r.Threshold))
	}
	s.root, c.root = &RootEntry{Index: 0, Digest: env.Digest(), Record: r, Keys: list}, true
	for _, k := range list {
		s.trust(k, c)
	}
	return &Applied{Index: 0, Kind: schemas.KindRoot, Digest: env.Digest(), Record: r, Signers: verified.Keys}, nil
}

// rootSigners returns how many distinct root keys are among keys.
func (s *State) rootSigners(keys []sign.PublicKey) (n uint64, ids []string) {
	for _, k := range keys {
		for _, rk := range s.root.Keys {
			if rk.Equal(k) {
				n++
				ids = append(ids, k.ID())
				break
			}
		}
	}
	return n, ids
}

func (s *State) applyDelegation(a *Applied, r *schemas.Delegation, c *change) error {
	n, ids := s.rootSigners(a.Signers)
	if n < s.root.Record.Threshold {
		if n == 0 {
			return refuse(a.Index, RuleNotSupportedYet, errors.New("delegation not signed by root keys: re-delegation is not supported yet"))
		}
		return refuse(a.Index, RuleThreshold, fmt.Errorf("delegation signed by %d distinct root keys, threshold %d", n, s.root.Record.Threshold))
	}
	if r.IssuedAt >= s.root.Record.Expires {
		return refuse(a.Index, RuleRootExpired, fmt.Errorf("delegation issued at %s, after the root expired at %s", unixUTC(r.IssuedAt), unixUTC(s.root.Record.Expires)))
	}
	key, err := sign.NewPublicKey(r.Key)
	if err != nil {
		return refuse(a.Index, RuleMalformed, fmt.Errorf("delegation.key: %w", err))
	}
	s.grants = append(s.grants, &Grant{Index: a.Index, Digest: a.Digest, Record: r, Key: key, Signers: ids})
	s.trust(key, c)
	return nil
}

// applySigned checks that the record has exactly one signer and that the
// signer is authorized for req, then calls add.
func (s *State) applySigned(a *Applied, req Request, add func()) error {
	if len(a.Signers) != 1 {
		return refuse(a.Index, RuleMalformed, fmt.Errorf("a %s record has exactly one signer, has %d", a.Kind, len(a.Signers)))
	}
	req.Key = a.Signers[0]
	if _, err := s.Authorize(req); err != nil {
		var d *Denial
		errors.As(err, &d)
		return refuse(a.Index, d.Rule, err)
	}
	if add != nil {
		add()
	}
	return nil
}
