package runner

import (
	"fmt"
	"time"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/progress"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/sign"
	"github.com/writ-ledger/writ/verify"
	"github.com/writ-ledger/writ/verify/internal/replay"
)

// ImportLedger is replica.Import with the checks writ runs when a log
// grows: every entry of the export's authority log that the local one
// does not hold is replayed at the time the log accepted it (its
// signatures, its signer's authority, the time rule), exactly as an
// append judged it, into the local log's authority state, built from
// what the log persisted (verify.LoadAuthority: extended, or replayed
// whole when that cannot be used), or, without a local log, into a fresh
// state from entry 0; its first root must have the digest trustRoot
// when one is given (rules.RootUntrusted's check); every decision of a
// decisions section must decode strictly. Once the new entries are
// stored, the authority log's state index is extended by what their
// replay added (written whole for a new log), so that the next reader
// does not replay them. An export that fails any check stores nothing:
// the replica keeps what it held. trusted maps a section
// name to the verifier key its checkpoints must verify under. Errors: a
// *delegation.RecordError with the entry's index, and those of
// replica.Import.
func ImportLedger(dir, path string, trusted map[string]*formats.LogKey, trustRoot string) ([]replica.ImportedLog, error) {
	return ImportLedgerWith(dir, path, ImportOptions{Trusted: trusted, Trust: verify.Trust{TrustRoot: trustRoot}})
}

// ImportOptions are ImportLedgerWith's options.
type ImportOptions struct {
	// Trusted maps a section name to the verifier key its checkpoints
	// must verify under, parsed where the caller took it in (none, or
	// nil: as replica.ImportOptions.Trusted says).
	Trusted  map[string]*formats.LogKey
	Trust    verify.Trust     // its TrustRoot and its witness Policy
	Now      func() time.Time // the clock for the policy's cosignature times (nil: time.Now)
	Progress progress.Func    // told the export's bytes read, of twice its size (replica.ImportOptions.Progress)
	// Floors: per section name, checkpoints the section must reach and
	// extend (replica.ImportOptions.Floors).
	Floors map[string][]replica.Floor
	// TrustedKeys: per section name without a key in Trusted, the public
	// key its verifier key must hold (replica.ImportOptions.TrustedKeys).
	TrustedKeys map[string]sign.PublicKey
}

// ImportLedgerWith is ImportLedger under o.Trust: its TrustRoot, and its
// witness Policy, which the export's authority checkpoint (with the
// cosignatures exported with it) must meet at o.Now, or the import is
// refused before an entry is read (a *formats.QuorumError, wrapping
// formats.ErrQuorum, or formats.ErrPolicyLog).
func ImportLedgerWith(dir, path string, o ImportOptions) ([]replica.ImportedLog, error) {
	trusted, trust, now := o.Trusted, o.Trust, o.Now
	if now == nil {
		now = time.Now
	}
	trustRoot := trust.TrustRoot
	var cpCheck func(string, []byte, *formats.LogKey) error
	if trust.Policy != nil {
		cpCheck = func(name string, cosigned []byte, k *formats.LogKey) error {
			if name != "authority" {
				return nil
			}
			if _, err := trust.Policy.Check(cosigned, k, now()); err != nil {
				return fmt.Errorf("the export's authority checkpoint: %w", err)
			}
			return nil
		}
	}
	c := &importChecks{trustRoot: trustRoot}
	return replica.ImportWith(dir, path, replica.ImportOptions{Trusted: trusted, Floors: o.Floors, TrustedKeys: o.TrustedKeys, Checkpoint: cpCheck, Progress: o.Progress,
		Resume: c.resume, Check: c.check, Stored: c.stored})
}

// importChecks are ImportLedgerWith's checks of the authority section:
// its entries replayed into the state of the local authority log's
// (resumed from what the log persisted, verify.LoadAuthority) or, for a
// new one, into a fresh state from entry 0; and once they are stored,
// the log's state extended from what was stored (stored).
type importChecks struct {
	trustRoot string
	st        *delegation.State
}

// resume builds the state of the local authority log l from what it
// persisted (replayed whole, and its index written again, when that
// cannot be used).
func (c *importChecks) resume(name string, l *ledger.Log) (bool, error) {
	if name != "authority" {
		return false, nil
	}
	a, err := verify.LoadAuthority(l, nil)
	if err != nil {
		return false, err
	}
	c.st = a.State
	return true, nil
}

// check replays the section's entries (a decisions section's decode
// strictly) and then judges the authority log's first root.
func (c *importChecks) check(name string) (ledger.EntryFunc, func() error) {
	if name == "decisions" {
		return replay.Decisions()
	}
	if c.st == nil {
		c.st = delegation.NewState()
	}
	fn, wait := replay.Apply(c.st, nil)
	return fn, func() error {
		if err := wait(); err != nil {
			return err
		}
		return verify.Trust{TrustRoot: c.trustRoot}.CheckRoot(c.st)
	}
}

// stored extends the authority log's persisted state by the entries the
// import stored, judging them again as they were stored
// (verify.LoadAuthority: each at the time of the history checkpoint
// stored for its batch; the whole log replayed, and the index written,
// when more than a batch is new), not from what check saw: an export
// rewritten between the import's two passes can change a batch's
// history checkpoint, and with it the time its entries are judged at,
// without changing the entries. A stored log that does not verify so is
// refused here, and every act then refuses it too.
func (c *importChecks) stored(name string, l *ledger.Log) error {
	if name != "authority" {
		return nil
	}
	if _, err := verify.LoadAuthority(l, nil); err != nil {
		return fmt.Errorf("the authority log as stored does not verify: %w", err)
	}
	return nil
}
