package delegation

import (
	"errors"
	"fmt"
	"time"

	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// Rule ids for records refused by Apply, besides the Denial rules.
const (
	RuleMalformed       = "malformed-record"  // not a canonical envelope or record
	RuleBadSignature    = "bad-signature"     // a signature by a known key does not verify
	RuleUnknownKey      = "unknown-key"       // signed by no key the ledger trusts
	RuleThreshold       = "threshold-not-met" // fewer distinct root keys than the threshold
	RuleWrongKind       = "wrong-record-kind" // a kind that may not stand at this position
	RuleNotSupportedYet = "not-supported"     // a valid act this version cannot apply yet
	RuleDuplicate       = "duplicate-record"  // the same record bytes are already in the log
)

// ErrRefused is wrapped by every *RecordError.
var ErrRefused = errors.New("record refused")

// RecordError says why the record at Index was refused: the rule id and
// the underlying error (which may be a *Denial, a sign or schemas error).
type RecordError struct {
	Index int64
	Rule  string
	Err   error
}

// Error names the index the record would have had, the rule and why.
func (e *RecordError) Error() string {
	var d *Denial
	if errors.As(e.Err, &d) {
		return fmt.Sprintf("refused as entry %d: %s: %s", e.Index, d.Rule, d.Reason)
	}
	return fmt.Sprintf("refused as entry %d: %s: %v", e.Index, e.Rule, e.Err)
}

// Unwrap returns ErrRefused and the underlying error, so errors.Is works
// with either.
func (e *RecordError) Unwrap() []error { return []error{ErrRefused, e.Err} }

// RootEntry is the root accepted at index 0.
type RootEntry struct {
	Index  int64
	Digest string
	Record *schemas.Root
	Keys   []sign.PublicKey
}

// PinEntry is an accepted pin.
type PinEntry struct {
	Index  int64
	Digest string
	Record *schemas.Pin
	Signer string // key id
}

// Applied describes a record Apply accepted.
type Applied struct {
	Index   int64
	Kind    schemas.Kind
	Digest  string
	Record  schemas.Record
	Signers []sign.PublicKey
}

// State is the authority in force after a prefix of the authority log.
// It is not safe for concurrent mutation; readers may share a State that
// is no longer being applied to.
type State struct {
	size   int64
	root   *RootEntry
	grants []*Grant
	pins   []*PinEntry
	keys   map[string]sign.PublicKey // every key the state trusts, by key id
	seen   map[string]int64          // record digest → index, to refuse duplicates
}

// NewState returns the empty state, before entry 0.
func NewState() *State {
	return &State{keys: map[string]sign.PublicKey{}, seen: map[string]int64{}}
}

// Size returns how many entries have been applied.
func (s *State) Size() int64 { return s.size }

// Root returns the root, or nil before entry 0 is applied.
func (s *State) Root() *RootEntry { return s.root }

// Key returns the trusted key with this key id: a root key or a key that
// holds a delegation. It has the shape of sign.KeyLookup.
func (s *State) Key(id string) (sign.PublicKey, bool) {
	k, ok := s.keys[id]
	return k, ok
}

// LatestPin returns the pin with the highest ledger index for artifact on
// platform, or nil.
func (s *State) LatestPin(artifact, platform string) *PinEntry {
	for i := len(s.pins) - 1; i >= 0; i-- {
		p := s.pins[i]
		if p.Record.Artifact == artifact && p.Record.Platform == platform {
			return p
		}
	}
	return nil
}

func refuse(index int64, rule string, err error) error {
	return &RecordError{Index: index, Rule: rule, Err: err}
}

// Apply checks entry as the record at position s.Size() of the authority
// log and, if every check passes, adds it to the state. On refusal it
// returns a *RecordError (wrapping ErrRefused) with the rule id, and the
// state is unchanged.
func (s *State) Apply(entry []byte) (*Applied, error) {
	index := s.size
	env, err := sign.ParseEnvelope(entry)
	if err != nil {
		return nil, refuse(index, RuleMalformed, err)
	}
	// Duplicates are judged by content (the signed payload, which also
	// determines the kind: every kind has its own required fields), not by
	// envelope bytes, so re-signing or dropping one of several signatures
	// does not make the same act new.
	content := schemas.SHA256Digest(env.Payload)
	if prev, dup := s.seen[content]; dup {
		return nil, refuse(index, RuleDuplicate, fmt.Errorf("this %s record's content is already entry %d", env.Kind, prev))
	}
	if index == 0 {
		a, err := s.applyRoot(env)
		if err == nil {
			s.seen[content] = 0
		}
		return a, err
	}
	verified, err := env.Verify(s.Key)
	if err != nil {
		return nil, refuse(index, RuleBadSignature, err)
	}
	if len(verified.Unknown) > 0 {
		// Every signature in the authority log is by a key the ledger
		// trusts; an entry padded with strangers' signatures is refused.
		return nil, refuse(index, RuleUnknownKey, fmt.Errorf("%s record signed by key ids this ledger does not trust: %v", env.Kind, verified.Unknown))
	}
	rec, err := schemas.Decode(env.Kind, env.Payload)
	if err != nil {
		return nil, refuse(index, RuleMalformed, err)
	}
	if (env.Kind == schemas.KindPin || env.Kind == schemas.KindInstruction) && len(env.Signatures) != 1 {
		return nil, refuse(index, RuleMalformed, fmt.Errorf("a %s record carries exactly one signature, this one carries %d", env.Kind, len(env.Signatures)))
	}
	a := &Applied{Index: index, Kind: env.Kind, Digest: env.Digest(), Record: rec, Signers: verified.Keys}
	switch r := rec.(type) {
	case *schemas.Delegation:
		err = s.applyDelegation(a, r)
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
	s.seen[content] = index
	s.size++
	return a, nil
}

func (s *State) applyRoot(env *sign.Envelope) (*Applied, error) {
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
	s.root = &RootEntry{Index: 0, Digest: env.Digest(), Record: r, Keys: list}
	for id, k := range keys {
		s.keys[id] = k
	}
	s.size = 1
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

func (s *State) applyDelegation(a *Applied, r *schemas.Delegation) error {
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
	s.keys[key.ID()] = key
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

// Clone returns a copy of s that can be applied to without changing s.
// Records themselves are shared; they are never mutated.
func (s *State) Clone() *State {
	c := &State{size: s.size, root: s.root, keys: make(map[string]sign.PublicKey, len(s.keys)), seen: make(map[string]int64, len(s.seen))}
	for k, v := range s.seen {
		c.seen[k] = v
	}
	c.grants = append([]*Grant(nil), s.grants...)
	c.pins = append([]*PinEntry(nil), s.pins...)
	for k, v := range s.keys {
		c.keys[k] = v
	}
	return c
}
