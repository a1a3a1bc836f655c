package delegation

import (
	"errors"
	"fmt"
	"sync"

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
// One goroutine applies entries; others may use Directory concurrently,
// and may read the state only when no entry is being applied.
type State struct {
	size   int64
	root   *RootEntry
	grants []*Grant
	pins   []*PinEntry
	keys   map[string]sign.PublicKey // every key the state trusts, by key id
	seen   map[[32]byte]int64        // SHA-256 of the payload → index, to refuse duplicates

	// dir holds every key any applied entry introduced (key id →
	// sign.PublicKey), never deleted, for concurrent pre-verification.
	dir sync.Map
	// journal records what each entry applied since Mark changed, so that
	// Reset can undo it; nil when not journaling.
	journal []change
}

// change is what applying one entry added, for Reset.
type change struct {
	content      [32]byte
	root         bool
	grants, pins int // lengths before the entry
	newKeys      []string
}

// NewState returns the empty state, before entry 0.
func NewState() *State {
	return &State{keys: map[string]sign.PublicKey{}, seen: map[[32]byte]int64{}}
}

// Mark starts (or continues) journaling and returns the current size, to
// which Reset can return. Group commit uses it: entries are applied as
// they are admitted to a batch, and undone if the batch does not commit.
func (s *State) Mark() int64 {
	if s.journal == nil {
		s.journal = make([]change, 0, 64)
	}
	return s.size
}

// Reset undoes every entry applied after mark (a value Mark returned
// since the last Settle).
func (s *State) Reset(mark int64) {
	for s.size > mark && len(s.journal) > 0 {
		c := s.journal[len(s.journal)-1]
		s.journal = s.journal[:len(s.journal)-1]
		delete(s.seen, c.content)
		if c.root {
			s.root = nil
		}
		s.grants = s.grants[:c.grants]
		s.pins = s.pins[:c.pins]
		for _, id := range c.newKeys {
			delete(s.keys, id)
		}
		s.size--
	}
}

// Settle ends journaling: everything applied is now permanent.
func (s *State) Settle() { s.journal = nil }

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

// trust adds a key to the trusted set (and the directory), noting it in
// the journal entry c.
func (s *State) trust(k sign.PublicKey, c *change) {
	if _, had := s.keys[k.ID()]; !had {
		s.keys[k.ID()] = k
		c.newKeys = append(c.newKeys, k.ID())
	}
	s.dir.Store(k.ID(), k)
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
