package runner

import (
	"errors"
	"fmt"

	"github.com/writ-ledger/writ/delegation"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/ledger/replica"
	"github.com/writ-ledger/writ/ledger/tiles"
	"github.com/writ-ledger/writ/verify"
)

// FailureKind says what a failed sync or repair refuses, for a caller
// to give it an exit class.
type FailureKind int

const (
	// FailNotOpened: a log could not be opened or written (a store in
	// use, damaged or unreadable): the error is the operation's own.
	FailNotOpened FailureKind = iota
	// FailRefused: the log, its checkpoint, its entries or a trust
	// assertion fail a check (a verdict of no).
	FailRefused
	// FailRecordRefused: an entry's record is refused by the authority
	// replayed (a *delegation.RecordError, with its rule and next act).
	FailRecordRefused
	// FailBadInput: what was given cannot be used: a policy of another
	// log, a source that cannot be read, a key that is not the log's, no
	// key at all.
	FailBadInput
	// FailOther: none of these; the error is the operation's own, for
	// the caller to classify as any error.
	FailOther
)

// Failure is a failed sync (Replica.Sync, Replica.Watch) or repair
// (RepairLedger) as a caller reports it: its kind, the error to print
// and the next acts, in order.
type Failure struct {
	Kind  FailureKind
	Err   error
	Hints []string
	// Evidence are the lines of what a split view or an inconsistency
	// showed: both signed checkpoints (replica.EvidenceLines), to keep.
	Evidence []string
}

// ClassifySync says what a sync's error refuses. Its Err is "nothing
// synced: ..." but for a wrong key and a replica not opened, which are
// the sync's own error. A split view (a
// *replica.SplitViewError) and an inconsistency (a
// *ledger.InconsistencyError) carry both signed checkpoints as hint lines
// (replica.EvidenceLines).
func ClassifySync(err error) Failure {
	nothing := fmt.Errorf("nothing synced: %w", err)
	var ie *ledger.InconsistencyError
	var re *delegation.RecordError
	var sv *replica.SplitViewError
	switch {
	case errors.As(err, &sv):
		return Failure{Kind: FailRefused, Err: nothing,
			Hints:    []string{"treat the log as split: its key signed both; stop trusting it until its operators explain them"},
			Evidence: replica.EvidenceLines(sv.InconsistencyError, "the published signed checkpoint:", sv.Source+"'s signed checkpoint:")}
	case errors.As(err, &ie):
		return Failure{Kind: FailRefused, Err: nothing, Evidence: replica.EvidenceLines(ie, "the replica's signed checkpoint:", "the published signed checkpoint:")}
	case errors.As(err, &re):
		return Failure{Kind: FailRecordRefused, Err: nothing}
	case errors.Is(err, replica.ErrSourceLog), errors.Is(err, formats.ErrCheckpointSignature), errors.Is(err, formats.ErrMalformedCheckpoint),
		errors.Is(err, ledger.ErrTampered), errors.Is(err, verify.ErrRootUntrusted), errors.Is(err, ledger.ErrHistory):
		return Failure{Kind: FailRefused, Err: nothing}
	case errors.Is(err, formats.ErrPolicyLog):
		return Failure{Kind: FailBadInput, Err: nothing, Hints: []string{"give the policy of this log: its `log` line is the log's verifier key"}}
	case errors.Is(err, formats.ErrQuorum):
		return Failure{Kind: FailRefused, Err: nothing, Hints: []string{
			"the writer collects its witnesses' cosignatures with `writ ledger checkpoint --refresh --policy`; sync again once they have cosigned",
			"if the writer asks other witnesses than this policy requires, the two policies must be made to agree"}}
	case errors.Is(err, tiles.ErrFetch):
		return Failure{Kind: FailBadInput, Err: nothing, Hints: []string{"check --from; a source that stalls or sends more than a file can hold is cut off"}}
	case errors.Is(err, ledger.ErrWrongKey):
		return Failure{Kind: FailBadInput, Err: err}
	}
	return Failure{Kind: FailNotOpened, Err: err}
}
