package delegation

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/writ-ledger/writ/rules"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/semver"
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

// RootEntry is an accepted root: the first at index 0, later ones by
// rotation.
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

// IssuerEntry is an accepted issuer record.
type IssuerEntry struct {
	Index  int64
	Digest string
	Record *schemas.Issuer
}

// QuarantineEntry is the latest quarantine act for a machine, whether
// the root threshold signed it, and when the ledger accepted it.
type QuarantineEntry struct {
	Index    int64
	Record   *schemas.Quarantine
	ByRoot   bool
	Accepted time.Time
}

// drains reports whether the act quarantines the machine at t: it is a
// quarantine (not a lift), the ledger accepted it by t, and its until (if
// any) has not passed.
func (q *QuarantineEntry) drains(t time.Time) bool {
	u := t.Unix()
	return !q.Record.Lift && u >= q.Accepted.Unix() && (q.Record.Until == 0 || u < q.Record.Until)
}

// DowngradeEntry is an accepted downgrade record.
type DowngradeEntry struct {
	Index  int64
	Digest string
	Record *schemas.Downgrade
}

// Downgrade returns an unrevoked, unexpired (at unix time t) downgrade
// record allowing artifact at exactly version, or nil; nil too when the
// root that signed it has expired at t.
func (s *State) Downgrade(artifact, version string, t int64) *DowngradeEntry {
	if s.rootExpiredAt(time.Unix(t, 0)) != nil {
		return nil
	}
	for i := len(s.downgrades) - 1; i >= 0; i-- {
		d := s.downgrades[i]
		if _, gone := s.revoked[d.Digest]; gone {
			continue
		}
		if d.Record.Artifact == artifact && d.Record.Version == version && t < d.Record.Expires {
			return d
		}
	}
	return nil
}

// Applied describes a record Apply accepted: its ledger index, kind,
// digest, record, verified signers, and the time the ledger accepted it.
// Its JSON, {"index", "kind", "digest"}, is one object of writ ledger
// append's result.
type Applied struct {
	Index    int64            `json:"index" doc:"the record's index in the authority log"`
	Kind     schemas.Kind     `json:"kind" doc:"the record's kind"`
	Digest   string           `json:"digest" doc:"sha256:<hex> of the record"`
	Record   schemas.Record   `json:"-"`
	Signers  []sign.PublicKey `json:"-"`
	Accepted time.Time        `json:"-"`
	// Content is the record's content key: the SHA-256 of its signed
	// payload, what a duplicate is judged by.
	Content [32]byte `json:"-"`
}

// State is the authority in force after a prefix of the authority log.
// One goroutine applies entries; others may use Directory concurrently,
// and may read the state only when no entry is being applied.
type State struct {
	size        int64
	roots       []*RootEntry // the chain; the last is in force
	grants      []*Grant
	byDigest    map[string]any // record digest → *Grant, *PinEntry or *IssuerEntry
	pins        []*PinEntry
	issuers     map[string]*IssuerEntry     // by issuer URL
	quarantines map[string]*QuarantineEntry // by machine name
	downgrades  []*DowngradeEntry
	revoked     map[string]int64          // key id or record digest → index of the revocation
	keys        map[string]sign.PublicKey // every key a record introduced, by key id
	seen        contentSet                // SHA-256 of the payload → index, to refuse duplicates
	// base, for a state extended from a persisted one (NewStateOver),
	// holds the content keys of the entries it did not apply, and
	// overlay those it applied since (seen is unused then).
	base    Seen
	overlay map[[32]byte]int64

	// dir holds every key any applied entry introduced (key id →
	// sign.PublicKey), never deleted, for concurrent pre-verification.
	dir sync.Map
	// journal holds, for each entry applied since Mark, how to undo it;
	// nil when not journaling.
	journal [][]func()
	undo    []func() // the undo steps of the entry being applied
}

// NewState returns the empty state, before entry 0.
func NewState() *State {
	return &State{byDigest: map[string]any{}, issuers: map[string]*IssuerEntry{}, quarantines: map[string]*QuarantineEntry{},
		revoked: map[string]int64{}, keys: map[string]sign.PublicKey{}, seen: newContentSet()}
}

// Mark starts (or continues) journaling and returns the current size, to
// which Reset can return. Group commit uses it: entries are applied as
// they are admitted to a batch, and undone if the batch does not commit.
func (s *State) Mark() int64 {
	if s.journal == nil {
		s.journal = make([][]func(), 0, 64)
	}
	return s.size
}

// Reset undoes every entry applied after mark (a value Mark returned
// since the last Settle).
func (s *State) Reset(mark int64) {
	for s.size > mark && len(s.journal) > 0 {
		steps := s.journal[len(s.journal)-1]
		s.journal = s.journal[:len(s.journal)-1]
		for i := len(steps) - 1; i >= 0; i-- {
			steps[i]()
		}
		s.size--
	}
}

// Settle ends journaling: everything applied is now permanent.
func (s *State) Settle() { s.journal = nil }

// record notes how to undo one change of the entry being applied.
func (s *State) record(undo func()) { s.undo = append(s.undo, undo) }

// setMap sets m[k] = v and records how to restore the previous value.
func setMap[K comparable, V any](s *State, m map[K]V, k K, v V) {
	old, had := m[k]
	m[k] = v
	s.record(func() {
		if had {
			m[k] = old
		} else {
			delete(m, k)
		}
	})
}

// appendTo appends v to *list and records how to drop it.
func appendTo[T any](s *State, list *[]T, v T) {
	n := len(*list)
	*list = append(*list, v)
	s.record(func() { *list = (*list)[:n] })
}

// Directory looks up any key an applied entry ever introduced, including
// entries later undone. It is safe for concurrent use and only for
// pre-verifying signatures (Prepare); trust is decided by Apply.
func (s *State) Directory(id string) (sign.PublicKey, bool) {
	v, ok := s.dir.Load(id)
	if !ok {
		return sign.PublicKey{}, false
	}
	return v.(sign.PublicKey), true
}

// trust adds a key to the known set (and the directory).
func (s *State) trust(k sign.PublicKey) {
	if _, had := s.keys[k.ID()]; !had {
		setMap(s, s.keys, k.ID(), k)
	}
	s.dir.Store(k.ID(), k)
}

// Size returns how many entries have been applied.
func (s *State) Size() int64 { return s.size }

// Root returns the root in force, or nil before entry 0 is applied.
func (s *State) Root() *RootEntry {
	if len(s.roots) == 0 {
		return nil
	}
	return s.roots[len(s.roots)-1]
}

// Roots returns the chain of roots, first to current.
func (s *State) Roots() []*RootEntry { return s.roots }

// Key returns the key with this key id that some record introduced (a
// root key or a delegate). It has the shape of sign.KeyLookup; whether
// the key may do anything is Authorize's question.
func (s *State) Key(id string) (sign.PublicKey, bool) {
	k, ok := s.keys[id]
	return k, ok
}

// Revoked returns the index of the revocation of a key id or record
// digest, and whether there is one.
func (s *State) Revoked(target string) (int64, bool) {
	i, ok := s.revoked[target]
	return i, ok
}

// LatestPin returns the pin in force for artifact on platform at t: the
// unrevoked pin with the highest ledger index whose signer still holds
// "pin" for the artifact at t (a pin stands only while its signer's
// delegation does, so a pin whose key expired or was revoked never
// shadows an earlier one that stands). When no pin stands it returns the
// latest unrevoked pin with the signer's denial, so that the caller can
// refuse naming it; nil when there is no unrevoked pin at all.
func (s *State) LatestPin(artifact, platform string, t time.Time) (*PinEntry, *Denial) {
	var latest *PinEntry
	var denial *Denial
	for i := len(s.pins) - 1; i >= 0; i-- {
		p := s.pins[i]
		if _, gone := s.revoked[p.Digest]; gone || p.Record.Artifact != artifact || p.Record.Platform != platform {
			continue
		}
		_, err := s.Authorize(Request{Key: s.keys[p.Signer], Action: schemas.ActionPin, Artifact: artifact, Builder: p.Record.Builder(), At: t})
		if err == nil {
			return p, nil
		}
		if latest == nil {
			latest, denial = p, denialOf(err)
		}
	}
	return latest, denial
}

// LowestPinned returns the pin, revoked or not, that gave the binary
// digest for artifact on platform its lowest version (by semantic
// version precedence, golang.org/x/mod/semver), or nil if that digest was
// never pinned. The same bytes pinned again under a higher version are
// still the lower version: a runner judges rollback by this one.
func (s *State) LowestPinned(artifact, platform, digest string) *PinEntry {
	var low *PinEntry
	for _, p := range s.pins {
		r := p.Record
		if r.Artifact == artifact && r.Platform == platform && r.Digest == digest &&
			(low == nil || semver.Compare(r.Version, low.Record.Version) < 0) {
			low = p
		}
	}
	return low
}

// Issuer returns the unrevoked issuer record for the issuer URL in force
// at t, or nil when there is none. An issuer record stands on the root
// that signed it: when the root in force has expired at t, it returns nil
// and the RuleRootExpired denial.
func (s *State) Issuer(url string, t time.Time) (*IssuerEntry, *Denial) {
	e := s.issuers[url]
	if e == nil {
		return nil, nil
	}
	if _, gone := s.revoked[e.Digest]; gone {
		return nil, nil
	}
	if d := s.rootExpiredAt(t); d != nil {
		return nil, d
	}
	return e, nil
}

// rootExpiredAt returns the RuleRootExpired denial when the root in force
// has expired at t (at expires it already has), else nil.
func (s *State) rootExpiredAt(t time.Time) *Denial {
	root := s.Root()
	if root == nil {
		return &Denial{Rule: RuleNoDelegation, Reason: "the ledger has no root"}
	}
	if t.Unix() >= root.Record.Expires {
		return &Denial{Rule: RuleRootExpired, Reason: fmt.Sprintf("root version %d expired at %s", root.Record.Version, unixUTC(root.Record.Expires))}
	}
	return nil
}

// Quarantine returns the quarantine in force for machine at unix time t,
// or nil: the machine's latest act, when it is a quarantine the ledger
// accepted by t whose until (if any) has not passed. It is judged from the
// time the ledger accepted it, not the issued_at its signer chose.
func (s *State) Quarantine(machine string, t int64) *QuarantineEntry {
	q := s.quarantines[machine]
	if q == nil || !q.drains(time.Unix(t, 0)) {
		return nil
	}
	return q
}

// NextAct is what the operator should do about the refused record: the
// rule's AppendAct (package rules), or a more precise act where the
// refusal's cause calls for one (a parent that may not be re-delegated at
// all, a key retired by a root rotation, a field rule broken inside a
// well-formed envelope). "" when the rule has none.
func (e *RecordError) NextAct() string {
	rule := e.Rule
	var d *Denial
	if errors.As(e.Err, &d) {
		if d.Act != "" {
			return d.Act
		}
		rule = d.Rule
	}
	switch {
	case errors.Is(e.Err, errNoRedelegation):
		// No narrowing helps: the parent may not be re-delegated at all.
		return "the delegation behind the signer has re-delegation depth 0, so it may not be re-delegated; its signer must delegate that key again with --depth 1 or more (`writ delegate --action delegate,... --depth N`)"
	case rule == RuleMalformed && errors.Is(e.Err, schemas.ErrInvalid):
		// A well-formed envelope whose record breaks a field rule.
		return "the record breaks the field rule named above; make it again with the writ command for its kind"
	}
	r, _ := rules.Lookup(rule)
	return r.AppendAct
}
