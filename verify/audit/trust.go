package audit

import (
	"fmt"
	"strings"

	"github.com/writ-ledger/writ/ledger/formats"
)

// Where an audit took a log's checkpoint verifier key from
// (TrustedKey.Source).
const (
	// KeyGiven: the caller gave it (Options.AuthorityVKey or
	// DecisionsVKey: --vkey, --decisions-vkey, a fleet file).
	KeyGiven = "given"
	// KeyState: the auditor's state file remembered it from an earlier
	// audit.
	KeyState = "state"
	// KeyLedger: the log itself carried it. A log checked under its own
	// key is shown self-consistent, not shown to be the one it claims to
	// be: a directory rewritten with a new key verifies as well.
	KeyLedger = "ledger"
)

// Trust is what an audit's verification rests on: the keys the logs'
// checkpoints were checked with and where each came from, and the root
// the authority log had to start with.
type Trust struct {
	// Authority is the authority log's checkpoint verifier key; nil only
	// when the audit failed before choosing one.
	Authority *TrustedKey `json:"authority_key,omitempty"`
	// Decisions is the decision log's; nil when there is no decision log.
	Decisions *TrustedKey `json:"decisions_key,omitempty"`
	// TrustRoot is the digest (sha256:<hex>) the first root record had to
	// have (Options.TrustRoot, --trust-root); "" when the first root
	// was trusted on first use.
	TrustRoot string `json:"trust_root,omitempty"`
	// FirstRoot is the digest of the authority log's first root record as
	// verified; "" when the audit failed before reading it.
	FirstRoot string `json:"first_root,omitempty"`
	// Independent reports whether every log's key came from outside the
	// ledger (given or remembered): only then does a directory rewritten
	// with its keys replaced fail the audit.
	Independent bool `json:"independent"`
}

// TrustedKey is one checkpoint verifier key an audit used.
type TrustedKey struct {
	// Name is the key's name in its note verifier key (by convention
	// the log's origin).
	Name string `json:"name"`
	// KeyID is the key id of its public key (64 hex); "" if the key does
	// not parse (the audit then fails).
	KeyID string `json:"key_id"`
	// Source is KeyGiven, KeyState or KeyLedger.
	Source string `json:"source"`
}

// pickVKey returns the verifier key a log is checked with, as text, and
// where it came from: the one the caller gave (givenKey; nil: none), else the one the auditor's state
// file remembers (so a log re-signed under another key fails), else the
// log's own.
func pickVKey(log string, givenKey *formats.LogKey, remembered, own string) (*TrustedKey, string, error) {
	key, source, given := own, KeyLedger, givenKey.String()
	switch {
	case given != "" && remembered != "" && given != remembered:
		return nil, "", errVKeyMismatch(log, given, remembered)
	case given != "":
		key, source = given, KeyGiven
	case remembered != "":
		key, source = remembered, KeyState
	}
	tk := &TrustedKey{Source: source}
	tk.Name, _, _ = strings.Cut(key, "+")
	if pub, err := formats.VerifierPublicKey(key); err == nil {
		tk.KeyID = pub.ID()
	}
	return tk, key, nil
}

// pickedKey returns the key pickVKey picked, vkey: given itself when it
// is the one (parsed where the caller took it in), else vkey parsed here
// (the text the auditor's state remembers, or the log carries). A key
// that does not parse wraps formats.ErrCheckpointSignature.
func pickedKey(given *formats.LogKey, vkey string) (*formats.LogKey, error) {
	if given != nil && given.String() == vkey {
		return given, nil
	}
	k, err := formats.ParseLogKey(vkey)
	if err != nil {
		return nil, fmt.Errorf("%w: verifier key: %w", formats.ErrCheckpointSignature, err)
	}
	return k, nil
}

// setIndependent fills t.Independent from its keys.
func (t *Trust) setIndependent() {
	t.Independent = t.Authority != nil && t.Authority.Source != KeyLedger && (t.Decisions == nil || t.Decisions.Source != KeyLedger)
}
